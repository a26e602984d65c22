/* A tridiagonal system per row (Thomas algorithm), no time loop: the row loop is parallel, each
   row's elimination and back substitution are sequential recurrences along the row. */
#include <stdio.h>
#ifndef N
#define N 300
#endif
#ifndef M
#define M 400
#endif

static void solve_rows(int n, int m, double lo[M], double di[M], double up[M], double d[N][M],
                       double cp[N][M], double x[N][M])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    cp[i][0] = up[0] / di[0];
    x[i][0] = d[i][0] / di[0];
    for (j = 1; j < m; j++) {
      cp[i][j] = up[j] / (di[j] - lo[j] * cp[i][j - 1]);
      x[i][j] = (d[i][j] - lo[j] * x[i][j - 1]) / (di[j] - lo[j] * cp[i][j - 1]);
    }
    for (j = m - 2; j >= 0; j--)
      x[i][j] = x[i][j] - cp[i][j] * x[i][j + 1];
  }
#pragma endscop
}

static double lo[M], di[M], up[M], d[N][M], cp[N][M], x[N][M];

int main(void)
{
  int i, j;
  double s = 0.0;

  for (j = 0; j < M; j++) {
    lo[j] = -1.0 - (j % 3) * 0.25;
    up[j] = -1.0 + (j % 2) * 0.5;
    di[j] = 4.0 + (j % 5);
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      d[i][j] = (double)((i * 13 + j * 5) % 17) - 8.0;
  solve_rows(N, M, lo, di, up, d, cp, x);
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      s += x[i][j] * ((i + 2 * j) % 7);
  printf("%.12g %.17g %.17g\n", s, x[N - 1][M - 1], x[N / 2][0]);
  return 0;
}
