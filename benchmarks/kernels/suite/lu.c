/* lu: Doolittle LU factorization in place, without pivoting (A diagonally dominant):
 * for each k, the multipliers of column k, then the rank-1 update of the trailing block. */
#include "suite.h"

#if defined(SMALL)
#define N 80
#elif defined(MEDIUM)
#define N 400
#else
#define N 1400
#endif

void kernel_lu(int n, double A[N][N])
{
  int i, j, k;

#pragma scop
  for (k = 0; k < n; k++) {
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j < n; j++)
        A[i][j] = A[i][j] - A[i][k] * A[k][j];
  }
#pragma endscop
}

static double A[N][N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = i == j ? (double)N : (double)((i * 3 + j * 7) % 11) / 11.0 - 0.5;

  t0 = suite_now();
  kernel_lu(N, A);
  suite_time(suite_now() - t0);

  suite_checksum("A", &A[0][0], (long)N * N);
  return 0;
}
