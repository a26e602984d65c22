#include <stdio.h>
#define N 67
void kernel_jacobi_2d(int tsteps, int n, int A[N][N], int B[N][N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]) / 5;
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]) / 5;
  }
#pragma endscop
}
int main(void) {
  static int A[N][N], B[N][N];
  long s = 0, w = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = (i * 7 + j * 13) % 1000; B[i][j] = 0; }
  kernel_jacobi_2d(12, N, A, B);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { s += A[i][j]; w += B[i][j] * (i + j % 5); }
  printf("%ld %ld\n", s, w);
  return 0;
}
