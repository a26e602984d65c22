#include <stdio.h>
#define N 40
#define M 48
static double A[N][M], B[N][M], C[N][M];
static void kernel_sweep(int n, int m, double a, double b) {
  int i, j;
  for (i = 0; i < n; i++) {
    B[i][0] = A[i][0];
    for (j = 1; j < m; j++)
      B[i][j] = a * B[i][j-1] + b * A[i][j];
    for (j = m - 2; j >= 0; j--)
      C[i][j] = B[i][j] - a * C[i][j+1] * 0.5;
  }
}
int main(void) {
  int i, j;
  for (i = 0; i < N; i++) for (j = 0; j < M; j++) { A[i][j] = (i * 7 + j * 3) % 11 / 11.0; C[i][j] = 0.25; }
  kernel_sweep(N, M, 0.5, 0.25);
  for (i = 0; i < N; i++) for (j = 0; j < M; j++) printf("%.15g %.15g\n", B[i][j], C[i][j]);
  return 0;
}
