/* Jacobi 1-D called with overlapping arrays (B is A shifted by one): the computations' alias
   checks fail at run time, so the loop must run as written, with nothing kept on the device. */
#include <stdio.h>
#define N 1003
void kernel_jacobi_1d(int tsteps, int n, double *A, double *B) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.25 * (A[i - 1] + 2.0 * A[i] + A[i + 1]);
    for (i = 1; i < n - 1; i++)
      A[i] = 0.25 * (B[i - 1] + 2.0 * B[i] + B[i + 1]);
  }
#pragma endscop
}
int main(void) {
  static double X[N + 1];
  double s = 0;
  for (int i = 0; i <= N; i++) X[i] = (i % 11) * 8.0;
  kernel_jacobi_1d(20, N, X, X + 1);
  for (int i = 0; i <= N; i++) s += X[i] * (i % 7 + 1);
  printf("%.6f\n", s);
  return 0;
}
