/* atax: y := A^T (A x), row by row: tmp_i = A_i . x, then y += tmp_i A_i. */
#include "suite.h"

#ifdef SMALL
#define M 80
#define N 90
#define CALLS 1
#else
#define M 2800
#define N 3000
#define CALLS 15
#endif

void kernel_atax(int m, int n, double A[M][N], double x[N], double y[N], double tmp[M])
{
  int i, j;

#pragma scop
  for (i = 0; i < n; i++)
    y[i] = 0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < n; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < n; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
#pragma endscop
}

static double A[M][N], x[N], y[N], tmp[M];

int main(void)
{
  int i, j, r;
  double t0;

  for (i = 0; i < N; i++)
    x[i] = 1.0 + (double)i / N;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (double)((i + j) % N) / (5 * M);

  t0 = suite_now();
  for (r = 0; r < CALLS; r++)
    kernel_atax(M, N, A, x, y, tmp);
  suite_time(suite_now() - t0);

  suite_checksum("y", y, N);
  suite_checksum("tmp", tmp, M);
  return 0;
}
