#include <stdio.h>
#define N 1003
double kernel_probe(int tsteps, int n, double A[N], double B[N], double C[N]) {
  int t, i;
  double probe = 0;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.25 * (A[i - 1] + 2.0 * A[i] + A[i + 1]) + C[i];
    probe = probe + B[t + 1];
    for (i = 1; i < n - 1; i++)
      A[i] = 0.25 * (B[i - 1] + 2.0 * B[i] + B[i + 1]);
  }
#pragma endscop
  return probe;
}
int main(void) {
  static double A[N], B[N], C[N];
  for (int i = 0; i < N; i++) { A[i] = (i % 11) * 8.0; B[i] = 0; C[i] = i % 3; }
  double p = kernel_probe(20, N, A, B, C);
  double s = 0; for (int i = 0; i < N; i++) s += A[i] * (i % 5) + B[i];
  printf("%.6f %.6f\n", p, s);
  return 0;
}
