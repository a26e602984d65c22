#include <stdio.h>
#define N 40
void kernel_lu(int n, double A[N][N]) {
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++) {
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j < n; j++)
        A[i][j] = A[i][j] - A[i][k] * A[k][j];
  }
#pragma endscop
}
int main(void) {
  static double A[N][N];
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i == j) ? 1.0 : 0.0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] += (i > j) ? 0.5 : 0.0;
  kernel_lu(N, A);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += A[i][j] * (i + 1) * (j % 5 + 1);
  printf("%.6f\n", s);
  return 0;
}
