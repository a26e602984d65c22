/* trisolv: forward substitution, solve L x = b for lower triangular L. */
#include "suite.h"

#if defined(SMALL)
#define N 90
#define CALLS 1
#elif defined(MEDIUM)
#define N 2000
#define CALLS 12
#else
#define N 4000
#define CALLS 12
#endif

void kernel_trisolv(int n, double L[N][N], double x[N], double b[N])
{
  int i, j;

#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}

static double L[N][N], x[N], b[N];

int main(void)
{
  int i, j, r;
  double t0;

  for (i = 0; i < N; i++) {
    b[i] = (double)(i % 9) - 4.0;
    for (j = 0; j < i; j++)
      L[i][j] = (double)((i + N - j + 1) % 7) / (7.0 * N);
    L[i][i] = 1.0 + (double)(i % 3);
  }

  t0 = suite_now();
  for (r = 0; r < CALLS; r++)
    kernel_trisolv(N, L, x, b);
  suite_time(suite_now() - t0);

  suite_checksum("x", x, N);
  return 0;
}
