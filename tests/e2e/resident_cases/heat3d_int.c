#include <stdio.h>
#define N 18
void kernel_heat_3d(int tsteps, int n, long A[N][N][N], long B[N][N][N]) {
  int t, i, j, k;
#pragma scop
  for (t = 1; t <= tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          B[i][j][k] = (A[i + 1][j][k] - 2 * A[i][j][k] + A[i - 1][j][k]) / 8
                     + (A[i][j + 1][k] - 2 * A[i][j][k] + A[i][j - 1][k]) / 8
                     + (A[i][j][k + 1] - 2 * A[i][j][k] + A[i][j][k - 1]) / 8 + A[i][j][k];
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[i][j][k] = (B[i + 1][j][k] - 2 * B[i][j][k] + B[i - 1][j][k]) / 8
                     + (B[i][j + 1][k] - 2 * B[i][j][k] + B[i][j - 1][k]) / 8
                     + (B[i][j][k + 1] - 2 * B[i][j][k] + B[i][j][k - 1]) / 8 + B[i][j][k];
  }
#pragma endscop
}
int main(void) {
  static long A[N][N][N], B[N][N][N];
  long s = 0, w = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++) {
    A[i][j][k] = B[i][j][k] = (i * 31 + j * 17 + k * 7) % 1024; }
  kernel_heat_3d(10, N, A, B);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++) {
    s += A[i][j][k]; w += B[i][j][k] * (i + 2 * j + 3 * k); }
  printf("%ld %ld\n", s, w);
  return 0;
}
