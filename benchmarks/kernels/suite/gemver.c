/* gemver: A := A + u1 v1^T + u2 v2^T; x := x + beta A^T y + z; w := w + alpha A x. */
#include "suite.h"

#ifdef SMALL
#define N 90
#define CALLS 1
#else
#define N 3000
#define CALLS 6
#endif

void kernel_gemver(int n, double alpha, double beta, double A[N][N],
                   double u1[N], double v1[N], double u2[N], double v2[N],
                   double w[N], double x[N], double y[N], double z[N])
{
  int i, j;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];

#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];

#ifdef OMP_FOR
#pragma omp parallel for
#endif
  for (i = 0; i < n; i++)
    x[i] = x[i] + z[i];

#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      w[i] = w[i] + alpha * A[i][j] * x[j];
#pragma endscop
}

static double A[N][N], u1[N], v1[N], u2[N], v2[N], w[N], x[N], y[N], z[N];

int main(void)
{
  int i, j, r;
  double alpha = 0.5, beta = 0.25, t0;

  for (i = 0; i < N; i++) {
    u1[i] = (double)(i % 17) / 17.0;
    u2[i] = (double)((i + 3) % 13) / 26.0;
    v1[i] = (double)((i * 5) % 19) / 38.0;
    v2[i] = (double)((i * 3 + 1) % 23) / 46.0;
    y[i] = (double)(i % 11) / 11.0;
    z[i] = (double)(i % 7) / 7.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (j = 0; j < N; j++)
      A[i][j] = (double)((i * j) % N) / N;
  }

  t0 = suite_now();
  for (r = 0; r < CALLS; r++)
    kernel_gemver(N, alpha, beta, A, u1, v1, u2, v2, w, x, y, z);
  suite_time(suite_now() - t0);

  suite_checksum("A", &A[0][0], (long)N * N);
  suite_checksum("x", x, N);
  suite_checksum("w", w, N);
  return 0;
}
