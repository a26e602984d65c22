/* A pointer the loop reassigns (A = B) while the caller passes B == D: from the second step the
   computation's alias check fails and its own C runs on the host, so D must not stay on the device. */
#include <stdio.h>
#define N 1003
void kernel_ab(int tsteps, int n, double *A, double *B, double *D) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 0; i < n; i++)
      D[i] = D[i] + A[i];
    A = B;
  }
#pragma endscop
}
int main(void) {
  static double A[N], D[N];
  for (int i = 0; i < N; i++) { A[i] = (i % 11) * 8.0; D[i] = i % 4; }
  kernel_ab(5, N, A, D, D);
  double s = 0; for (int i = 0; i < N; i++) s += A[i] * (i % 5) + D[i] * (i % 3);
  printf("%.6f\n", s);
  return 0;
}
