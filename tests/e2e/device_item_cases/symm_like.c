#include <stdio.h>
#define M 20
#define N 24
static double A[M][M], B[M][N], C[M][N];
static void kernel_symm(int m, int n, double alpha, double beta) {
  int i, j, k;
  double temp2;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      temp2 = 0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
}
int main(void) {
  int i, j;
  for (i = 0; i < M; i++) for (j = 0; j < M; j++) A[i][j] = (double)((i + j) % 7) / 8;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) { B[i][j] = (double)((i * 3 + j) % 5) / 4; C[i][j] = (double)((i + 2 * j) % 9) / 16; }
  kernel_symm(M, N, 1.5, 1.25);
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) printf("%.15g\n", C[i][j]);
  return 0;
}
