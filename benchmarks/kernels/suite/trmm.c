/* trmm: B := alpha L B in place, L lower triangular (m x m); rows are updated from the last one
 * upwards, so every row still reads the old rows above it. */
#include "suite.h"

#ifdef SMALL
#define M 50
#define N 60
#else
#define M 800
#define N 900
#endif

void kernel_trmm(int m, int n, double alpha, double L[M][M], double B[M][N])
{
  int i, j, k;

#pragma scop
  for (i = m - 1; i >= 0; i--) {
#ifdef OMP_FOR
#pragma omp parallel for private(k)
#endif
    for (j = 0; j < n; j++) {
      B[i][j] *= L[i][i];
      for (k = 0; k < i; k++)
        B[i][j] += L[i][k] * B[k][j];
      B[i][j] *= alpha;
    }
  }
#pragma endscop
}

static double L[M][M], B[M][N];

int main(void)
{
  int i, j;
  double alpha = 1.5, t0;

  for (i = 0; i < M; i++) {
    for (j = 0; j < i; j++)
      L[i][j] = (double)((i + j) % M) / M / M;
    L[i][i] = 1.0;
    for (j = i + 1; j < M; j++)
      L[i][j] = -999.0; /* never read */
    for (j = 0; j < N; j++)
      B[i][j] = (double)((N + (i - j)) % N) / N;
  }

  t0 = suite_now();
  kernel_trmm(M, N, alpha, L, B);
  suite_time(suite_now() - t0);

  suite_checksum("B", &B[0][0], (long)M * N);
  return 0;
}
