/* covariance: the m x m sample covariance matrix of n observations of m variables. */
#include "suite.h"

#ifdef SMALL
#define M 50
#define N 60
#else
#define M 700
#define N 900
#endif

void kernel_covariance(int m, int n, double float_n, double data[N][M], double cov[M][M], double mean[M])
{
  int i, j, k;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(i)
#endif
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] -= mean[j];
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < m; i++)
    for (j = i; j < m; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < n; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - 1.0);
      cov[j][i] = cov[i][j];
    }
#pragma endscop
}

static double data[N][M], cov[M][M], mean[M];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      data[i][j] = (double)((i * j + 3 * i + j) % 97) / 97.0;

  t0 = suite_now();
  kernel_covariance(M, N, (double)N, data, cov, mean);
  suite_time(suite_now() - t0);

  suite_checksum("cov", &cov[0][0], (long)M * M);
  suite_checksum("mean", mean, M);
  return 0;
}
