/* The row loop carries flow dependences: row i reads c[n - 1 - i], written by an earlier row for
   the second half of the rows (a distance that changes with i), and the last element of the
   previous row of d. The nest must be kept. */
#include <stdio.h>
#ifndef N
#define N 300
#endif
#ifndef M
#define M 300
#endif

static void carried(int n, int m, double c[N], double d[N][M])
{
  int i, j;
#pragma scop
  for (i = 1; i < n; i++) {
    c[i] = c[n - 1 - i] * 0.5 + d[i - 1][m - 1] * 0.125;
    d[i][0] = c[i];
    for (j = 1; j < m; j++)
      d[i][j] = d[i][j - 1] * 0.25 + c[i];
  }
#pragma endscop
}

static double c[N], d[N][M];

int main(void)
{
  int i, j;
  double s = 0.0;

  for (i = 0; i < N; i++)
    c[i] = (double)(i % 7);
  carried(N, M, c, d);
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      s += d[i][j] * ((i + j) % 4);
  printf("%.12g %.17g\n", s, c[N - 1]);
  return 0;
}
