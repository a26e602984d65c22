/* inference.c with the promise in the function instead of run-time calls: matvec's
   '#pragma mdh resident(W)' keeps the weights on the device from its first call on. */
#include <stdio.h>
#define N 96
#define M 80
void matvec(int n, int m, double W[N][M], double x[M], double y[N]) {
  int i, j;
#pragma mdh resident(W)
#pragma mdh(y[i] : ++, +)
  for (i = 0; i < n; i++) {
    y[i] = 0.0;
    for (j = 0; j < m; j++)
      y[i] += W[i][j] * x[j];
  }
}
int main(void) {
  static double W[N][M], x[M], y[N];
  double s = 0;
  int t, i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      W[i][j] = (double)((i * 5 + j * 3) % 7 - 3);
  for (j = 0; j < M; j++)
    x[j] = (double)(j % 5 - 2);
  for (t = 0; t < 20; t++) {
    matvec(N, M, W, x, y);
    s += y[t % N];
    for (j = 0; j < M; j++)
      x[j] = (double)((long)y[(j + t) % N] % 5);
  }
  for (i = 0; i < N; i++)
    s += y[i] * (i % 3 + 1);
  printf("%.1f\n", s);
  return 0;
}
