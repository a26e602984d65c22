/* symm: C := alpha A B + beta C, A symmetric (m x m) with only its lower triangle stored. */
#include "suite.h"

#ifdef SMALL
#define M 50
#define N 60
#else
#define M 700
#define N 800
#endif

void kernel_symm(int m, int n, double alpha, double beta,
                 double C[M][N], double A[M][M], double B[M][N])
{
  int i, j, k;
  double acc;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j, k, acc)
#endif
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      acc = 0.0;
      for (k = 0; k <= i; k++)
        acc += A[i][k] * B[k][j];
      for (k = i + 1; k < m; k++)
        acc += A[k][i] * B[k][j];
      C[i][j] = beta * C[i][j] + alpha * acc;
    }
#pragma endscop
}

static double C[M][N], A[M][M], B[M][N];

int main(void)
{
  int i, j;
  double alpha = 1.5, beta = 1.2, t0;

  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      C[i][j] = (double)((i + j) % 100) / M;
      B[i][j] = (double)((N + i - j) % 100) / M;
    }
  for (i = 0; i < M; i++) {
    for (j = 0; j <= i; j++)
      A[i][j] = (double)((i + j) % 100) / M;
    for (j = i + 1; j < M; j++)
      A[i][j] = -999.0; /* never read */
  }

  t0 = suite_now();
  kernel_symm(M, N, alpha, beta, C, A, B);
  suite_time(suite_now() - t0);

  suite_checksum("C", &C[0][0], (long)M * N);
  return 0;
}
