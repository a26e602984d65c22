/* Jacobi 1-D with a boundary value updated in every step (A[0] = A[1] + t): the statement runs as a
   one-thread kernel on the device, so neither A nor B is copied inside the loop. */
#include <stdio.h>
#define N 1003
void kernel_boundary(int tsteps, int n, double A[N], double B[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.25 * (A[i - 1] + 2.0 * A[i] + A[i + 1]);
    for (i = 1; i < n - 1; i++)
      A[i] = 0.25 * (B[i - 1] + 2.0 * B[i] + B[i + 1]);
    A[0] = A[1] + t;
  }
#pragma endscop
}
int main(void) {
  static double A[N], B[N];
  double s = 0, w = 0;
  for (int i = 0; i < N; i++) { A[i] = (i % 11) * 8.0; B[i] = 0; }
  kernel_boundary(16, N, A, B);
  for (int i = 0; i < N; i++) { s += A[i]; w += B[i] * (i % 7 + 1); }
  printf("%.6f %.6f\n", s, w);
  return 0;
}
