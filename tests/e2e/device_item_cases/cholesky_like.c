#include <math.h>
#include <stdio.h>
#define N 40
static double A[N][N];
static void kernel_cholesky(int n) {
  int i, j, k;
  for (k = 0; k < n; k++) {
    A[k][k] = sqrt(A[k][k]);
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
    for (j = k + 1; j < n; j++)
      for (i = j; i < n; i++)
        A[i][j] = A[i][j] - A[i][k] * A[j][k];
  }
}
int main(void) {
  int i, j, k;
  static double B[N][N];
  for (i = 0; i < N; i++)
    for (j = 0; j <= i; j++) {
      A[i][j] = (double)((i + j) % 3);
      A[j][i] = A[i][j];
    }
  for (i = 0; i < N; i++) A[i][i] += N;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) { B[i][j] = 0; for (k = 0; k < N; k++) B[i][j] += A[i][k] * A[j][k]; }
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) A[i][j] = B[i][j];
  kernel_cholesky(N);
  for (i = 0; i < N; i++) for (j = 0; j <= i; j++) printf("%.15g\n", A[i][j]);
  return 0;
}
