/* syr2k: C := alpha A B^T + alpha B A^T + beta C on the lower triangle of C. */
#include "suite.h"

#ifdef SMALL
#define N 70
#define M 50
#else
#define N 800
#define M 700
#endif

void kernel_syr2k(int n, int m, double alpha, double beta,
                  double C[N][N], double A[N][M], double B[N][M])
{
  int i, j, k;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j <= i; j++) {
      C[i][j] *= beta;
      for (k = 0; k < m; k++)
        C[i][j] += alpha * A[i][k] * B[j][k] + alpha * B[i][k] * A[j][k];
    }
#pragma endscop
}

static double C[N][N], A[N][M], B[N][M];

int main(void)
{
  int i, j;
  double alpha = 1.5, beta = 1.2, t0;

  for (i = 0; i < N; i++) {
    for (j = 0; j < M; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N;
      B[i][j] = (double)((i * j + 2) % M) / M;
    }
    for (j = 0; j < N; j++)
      C[i][j] = (double)((i * j + 3) % N) / M;
  }

  t0 = suite_now();
  kernel_syr2k(N, M, alpha, beta, C, A, B);
  suite_time(suite_now() - t0);

  suite_checksum("C", &C[0][0], (long)N * N);
  return 0;
}
