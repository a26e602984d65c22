/* correlation: the m x m Pearson correlation matrix of n observations of m variables
 * (a variable with near-zero deviation is scaled by 1 instead). */
#include "suite.h"

#ifdef SMALL
#define M 50
#define N 60
#else
#define M 700
#define N 900
#endif

void kernel_correlation(int m, int n, double float_n, double data[N][M], double corr[M][M],
                        double mean[M], double stddev[M])
{
  int i, j, k;
  double eps = 0.1;

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
#pragma omp parallel for private(i)
#endif
  for (j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (i = 0; i < n; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(float_n) * stddev[j];
    }
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < m - 1; i++) {
    corr[i][i] = 1.0;
    for (j = i + 1; j < m; j++) {
      corr[i][j] = 0.0;
      for (k = 0; k < n; k++)
        corr[i][j] += data[k][i] * data[k][j];
      corr[j][i] = corr[i][j];
    }
  }
  corr[m - 1][m - 1] = 1.0;
#pragma endscop
}

static double data[N][M], corr[M][M], mean[M], stddev[M];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      data[i][j] = (double)((i * j + 3 * i + j) % 97) / 9.7 + (double)(j % 5);

  t0 = suite_now();
  kernel_correlation(M, N, (double)N, data, corr, mean, stddev);
  suite_time(suite_now() - t0);

  suite_checksum("corr", &corr[0][0], (long)M * M);
  suite_checksum("stddev", stddev, M);
  return 0;
}
