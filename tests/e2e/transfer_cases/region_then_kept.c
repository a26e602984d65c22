/* A kept array that a data region then changes: smooth() runs a time loop whose arrays stay on the
   device (a region) and writes W back at its end; matvec keeps W between calls
   (#pragma mdh resident). The region's exit makes the kept copy stale, so the matvec after
   smooth() sees the new W. Integer-valued doubles: exact in any order. */
#include <stdio.h>
#define N 256
#define M 256
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
void smooth(int steps, int n, int m, double W[N][M], double V[N][M]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < steps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 0; j < m; j++)
        V[i][j] = W[i - 1][j] + W[i + 1][j] - W[i][j];
    for (i = 1; i < n - 1; i++)
      for (j = 0; j < m; j++)
        W[i][j] = (double)((long)V[i][j] % 9);
  }
#pragma endscop
}
int main(void) {
  static double W[N][M], V[N][M], x[M], y[N];
  double s = 0;
  int t, i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      W[i][j] = (double)((i * 3 + j * 5) % 7 - 3);
  for (j = 0; j < M; j++)
    x[j] = (double)(j % 3 - 1);
  for (t = 0; t < 6; t++) {
    matvec(N, M, W, x, y);
    s += y[t + 1];
    if (t == 2)
      smooth(3, N, M, W, V);
  }
  for (i = 0; i < N; i++)
    s += y[i] * (i % 4 + 1);
  printf("%.1f\n", s);
  return 0;
}
