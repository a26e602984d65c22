/* gramschmidt: QR factorization A = Q R by modified Gram-Schmidt; A (m x n) is overwritten. */
#include "suite.h"

#ifdef SMALL
#define M 60
#define N 50
#else
#define M 700
#define N 600
#endif

void kernel_gramschmidt(int m, int n, double A[M][N], double R[N][N], double Q[M][N])
{
  int i, j, k;
  double nrm;

#pragma scop
  for (k = 0; k < n; k++) {
    nrm = 0.0;
    for (i = 0; i < m; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = sqrt(nrm);
    for (i = 0; i < m; i++)
      Q[i][k] = A[i][k] / R[k][k];
#ifdef OMP_FOR
#pragma omp parallel for private(i)
#endif
    for (j = k + 1; j < n; j++) {
      R[k][j] = 0.0;
      for (i = 0; i < m; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (i = 0; i < m; i++)
        A[i][j] = A[i][j] - Q[i][k] * R[k][j];
    }
  }
#pragma endscop
}

static double A[M][N], R[N][N], Q[M][N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (i == j ? 4.0 : 0.0) + (double)((i * 7 + j * 3) % 11) / 11.0;

  t0 = suite_now();
  kernel_gramschmidt(M, N, A, R, Q);
  suite_time(suite_now() - t0);

  suite_checksum("R", &R[0][0], (long)N * N);
  suite_checksum("Q", &Q[0][0], (long)M * N);
  return 0;
}
