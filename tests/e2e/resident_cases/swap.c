#include <stdio.h>
#define N 1003
void kernel_swap(int tsteps, int n, double *A, double *B) {
  int t, i;
  double *tmp;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.25 * (A[i - 1] + 2.0 * A[i] + A[i + 1]);
    tmp = A; A = B; B = tmp;
  }
#pragma endscop
}
int main(void) {
  static double A[N], B[N];
  for (int i = 0; i < N; i++) { A[i] = (i % 11) * 8.0; B[i] = A[i]; }
  kernel_swap(20, N, A, B);
  double s = 0; for (int i = 0; i < N; i++) s += A[i] * (i % 5) + B[i];
  printf("%.6f\n", s);
  return 0;
}
