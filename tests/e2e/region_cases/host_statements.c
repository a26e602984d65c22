/* Host statements between the bands (run by one thread), iterators read after the nest, and
   a band whose extent shrinks with t: its run-time check is evaluated in every step. */
#include <stdio.h>
#ifndef N
#define N 3001
#endif
void kernel_mix(int tsteps, int n, double *a, double *b, double *edge) {
  int t, i;
  double e;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 0; i < n - t; i++)
      b[i] = a[i] * 0.5 + a[i + 1] + t;
    e = b[0] + b[n - t - 1];
    edge[t] = e;
    for (i = 0; i < n; i++)
      a[i] = b[i] - e;
  }
#pragma endscop
  printf("t=%d i=%d e=%.3f\n", t, i, e);
}
int main(void) {
  static double a[N + 1], b[N + 1], edge[16];
  double s = 0;
  for (int i = 0; i <= N; i++) { a[i] = i % 5; b[i] = 0; }
  kernel_mix(9, N, a, b, edge);
  for (int i = 0; i <= N; i++) s += a[i] * (i % 7 + 1) + b[i];
  for (int t = 0; t < 9; t++) s += edge[t];
  printf("%.6f\n", s);
  return 0;
}
