/* Host loops inside host loops: t (declared in its header) around a sequential k loop around two
   bands, and a row sum in the t loop (parallel only along its reduction: shared by the region's threads). */
#include <stdio.h>
#ifndef N
#define N 5001
#endif
void kernel_nested(int tsteps, int n, double *a, double *b, double *r) {
  int i, j, k;
#pragma scop
  for (int t = 0; t < tsteps; t++) {
    for (k = 1; k < 4; k++) {
      for (i = 0; i < n; i++)
        b[i] = a[i] * 0.5 + k;
      for (i = 1; i < n; i++)
        a[i] = b[i - 1] + b[i];
    }
    r[t] = 0;
    for (j = 0; j < n; j++)
      r[t] += a[j];
  }
#pragma endscop
  printf("i=%d j=%d k=%d\n", i, j, k);
}
int main(void) {
  static double a[N], b[N], r[8];
  double s = 0;
  for (int i = 0; i < N; i++) { a[i] = i % 4; b[i] = 0; }
  kernel_nested(4, N, a, b, r);
  for (int i = 0; i < N; i++) s += a[i] * (i % 3) + b[i];
  printf("%.3f %.3f %.3f %.3f %.3f\n", s, r[0], r[1], r[2], r[3]);
  return 0;
}
