/* Jacobi 2-D (5-point stencil), two sweeps per time step: one parallel region around t. */
#include <stdio.h>
#ifndef N
#define N 90
#endif
#ifndef TSTEPS
#define TSTEPS 4
#endif
void kernel_jacobi_2d(int tsteps, int n, double A[N][N], double B[N][N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.125 * (4 * A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.125 * (4 * B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
#pragma endscop
}
int main(void) {
  static double A[N][N], B[N][N];
  double s = 0, w = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { A[i][j] = ((i * j) % 13) * 64.0; B[i][j] = 0; }
  kernel_jacobi_2d(TSTEPS, N, A, B);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { s += A[i][j] + B[i][j]; w += A[i][j] * ((i + j) % 5); }
  printf("%.6f %.6f\n", s, w);
  return 0;
}
