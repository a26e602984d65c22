#include <stdio.h>
#define N 36
static double A[N][N], piv[N];
static void kernel_lu(int n) {
  int i, j, k;
  for (k = 0; k < n; k++) {
    piv[k] = 1.0 / A[k][k];
    A[k][k] = A[k][k] + 0.0;
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] * piv[k];
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j < n; j++)
        A[i][j] = A[i][j] - A[i][k] * A[k][j];
  }
}
int main(void) {
  int i, j;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) A[i][j] = (i == j) ? N + 1.0 : (double)((i * 7 + j * 5) % 13) / 13;
  kernel_lu(N);
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) printf("%.15g\n", A[i][j]);
  for (i = 0; i < N; i++) printf("%.15g\n", piv[i]);
  return 0;
}
