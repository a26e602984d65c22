/* adi: alternating-direction implicit scheme for the 2-D heat equation: per time step, one
 * tridiagonal system per row (u -> v), then one per column (v -> u), each solved with the Thomas
 * algorithm (forward elimination into p, q; back substitution from the far boundary). */
#include "suite.h"

#ifdef SMALL
#define N 40
#define TSTEPS 4
#else
#define N 1000
#define TSTEPS 20
#endif

void kernel_adi(int tsteps, int n, double u[N][N], double v[N][N], double p[N][N], double q[N][N])
{
  int t, i, j;
  double mu, diag;

  mu = 0.5;
  diag = 1.0 + 2.0 * mu;
#pragma scop
  for (t = 0; t < tsteps; t++) {
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = 1; i < n - 1; i++) {
      v[i][0] = u[i][0];
      v[i][n - 1] = u[i][n - 1];
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = mu / (diag - mu * p[i][j - 1]);
        q[i][j] = (u[i][j] + mu * q[i][j - 1]) / (diag - mu * p[i][j - 1]);
      }
      for (j = n - 2; j >= 1; j--)
        v[i][j] = p[i][j] * v[i][j + 1] + q[i][j];
    }
#ifdef OMP_FOR
#pragma omp parallel for private(i)
#endif
    for (j = 1; j < n - 1; j++) {
      u[0][j] = v[0][j];
      u[n - 1][j] = v[n - 1][j];
      p[0][j] = 0.0;
      q[0][j] = v[0][j];
      for (i = 1; i < n - 1; i++) {
        p[i][j] = mu / (diag - mu * p[i - 1][j]);
        q[i][j] = (v[i][j] + mu * q[i - 1][j]) / (diag - mu * p[i - 1][j]);
      }
      for (i = n - 2; i >= 1; i--)
        u[i][j] = p[i][j] * u[i + 1][j] + q[i][j];
    }
  }
#pragma endscop
}

static double u[N][N], v[N][N], p[N][N], q[N][N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      u[i][j] = (double)((i + N - j) % 19) + 1.0;
      v[i][j] = u[i][j];
    }

  t0 = suite_now();
  kernel_adi(TSTEPS, N, u, v, p, q);
  suite_time(suite_now() - t0);

  suite_checksum("u", &u[0][0], (long)N * N);
  return 0;
}
