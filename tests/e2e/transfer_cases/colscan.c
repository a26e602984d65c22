#include <stdio.h>
#define N 48
void kernel_colscan(int n, double A[N][N]) {
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++) {
    for (j = 1; j < n; j++)
      A[j][k] = A[j][k] * 0.5 + A[j - 1][k] * 0.25;
    A[k][k] = A[k][k] + 1.0;
    for (i = k + 1; i < n; i++)
      for (j = 0; j < n; j++)
        A[i][j] = A[i][j] + 0.125 * A[k][j];
  }
#pragma endscop
}
int main(void) {
  static double A[N][N];
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (double)((i * 7 + j * 3) % 13);
  kernel_colscan(N, A);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += A[i][j] * (i % 3 + 1) * (j % 5 + 1);
  printf("%.10f\n", s);
  return 0;
}
