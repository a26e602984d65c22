/* A declaration in the time loop's body: every thread would have its own copy, so the host
   loop is not made one parallel region (each band is parallel on its own). */
#include <stdio.h>
#ifndef N
#define N 2001
#endif
void kernel_decl(int tsteps, int n, double a[N], double b[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    double c = t * 0.5;
    for (i = 0; i < n; i++)
      b[i] = a[i] + c;
    for (i = 1; i < n; i++)
      a[i] = b[i - 1] * 0.5;
  }
#pragma endscop
}
int main(void) {
  static double a[N], b[N];
  double s = 0;
  for (int i = 0; i < N; i++) { a[i] = i % 9; b[i] = 0; }
  kernel_decl(5, N, a, b);
  for (int i = 0; i < N; i++) s += a[i] * (i % 7 + 1) + b[i];
  printf("%.6f\n", s);
  return 0;
}
