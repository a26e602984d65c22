#include <stdio.h>
#define N 40
void kernel_lu(int n, double A[N][N]) {
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    for (j = i; j < n; j++)
      for (k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
  }
#pragma endscop
}
int main(void) {
  static double A[N][N];
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1 + i + j);
  kernel_lu(N, A);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += A[i][j] * (i + 1) * (j % 5 + 1);
  printf("%.10f\n", s);
  return 0;
}
