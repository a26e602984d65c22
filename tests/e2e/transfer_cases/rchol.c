#include <stdio.h>
#include <math.h>
#define N 40
void kernel_rchol(int n, double A[N][N]) {
  int i, j, k;
  double d;
#pragma scop
  for (k = 0; k < n; k++) {
    A[k][k] = sqrt(A[k][k]);
    d = A[k][k];
    for (j = k + 1; j < n; j++)
      A[k][j] /= d;
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j < n; j++)
        A[i][j] -= A[k][i] * A[k][j];
  }
#pragma endscop
}
int main(void) {
  static double A[N][N];
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1 + i + j);
  kernel_rchol(N, A);
  for (int i = 0; i < N; i++) for (int j = i; j < N; j++) s += A[i][j] * (i + 1) * (j % 5 + 1);
  printf("%.10f\n", s);
  return 0;
}
