/* cholesky: A = L L^T for symmetric positive definite A, in place on the lower triangle,
 * right-looking: scale column k, then update the trailing lower triangle. */
#include "suite.h"

#if defined(SMALL)
#define N 80
#elif defined(MEDIUM)
#define N 400
#else
#define N 1200
#endif

void kernel_cholesky(int n, double A[N][N])
{
  int i, j, k;

#pragma scop
  for (k = 0; k < n; k++) {
    A[k][k] = sqrt(A[k][k]);
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
#ifdef OMP_FOR
#pragma omp parallel for private(i)
#endif
    for (j = k + 1; j < n; j++)
      for (i = j; i < n; i++)
        A[i][j] = A[i][j] - A[i][k] * A[j][k];
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
      A[i][j] = i == j ? (double)N : (double)((i + j) % 5) * 0.1;

  t0 = suite_now();
  kernel_cholesky(N, A);
  suite_time(suite_now() - t0);

  suite_checksum("A", &A[0][0], (long)N * N);
  return 0;
}
