/* seidel_2d: Gauss-Seidel relaxation in 2-D (5-point stencil, updated in place). */
#include "suite.h"

#ifdef SMALL
#define N 40
#define TSTEPS 8
#else
#define N 1200
#define TSTEPS 60
#endif

void kernel_seidel_2d(int tsteps, int n, double A[N][N])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < tsteps; t++)
    for (i = 1; i <= n - 2; i++)
      for (j = 1; j <= n - 2; j++)
        A[i][j] = 0.2 * (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i][j + 1] + A[i + 1][j]);
#pragma endscop
}

static double A[N][N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (double)((i * (j + 2)) % 37) + 2.0;

  t0 = suite_now();
  kernel_seidel_2d(TSTEPS, N, A);
  suite_time(suite_now() - t0);

  suite_checksum("A", &A[0][0], (long)N * N);
  return 0;
}
