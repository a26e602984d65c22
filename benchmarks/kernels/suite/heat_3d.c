/* heat_3d: explicit heat equation in 3-D (7-point stencil), two sweeps per time step. */
#include "suite.h"

#ifdef SMALL
#define N 14
#define TSTEPS 6
#else
#define N 130
#define TSTEPS 40
#endif

void kernel_heat_3d(int tsteps, int n, double A[N][N][N], double B[N][N][N])
{
  int t, i, j, k;

#pragma scop
  for (t = 1; t <= tsteps; t++) {
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          B[i][j][k] = A[i][j][k]
                       + 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                       + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                       + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1]);
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[i][j][k] = B[i][j][k]
                       + 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                       + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                       + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1]);
  }
#pragma endscop
}

static double A[N][N][N], B[N][N][N];

int main(void)
{
  int i, j, k;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        A[i][j][k] = B[i][j][k] = (double)((i + j + (N - k)) % 17) * 10.0 / N;

  t0 = suite_now();
  kernel_heat_3d(TSTEPS, N, A, B);
  suite_time(suite_now() - t0);

  suite_checksum("A", &A[0][0][0], (long)N * N * N);
  return 0;
}
