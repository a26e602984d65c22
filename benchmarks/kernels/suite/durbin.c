/* durbin: Levinson-Durbin recursion, solves the Yule-Walker system T y = -r for the symmetric
 * Toeplitz matrix T with first row (1, r[0], ..., r[n-2]). */
#include "suite.h"

#if defined(SMALL)
#define N 120
#elif defined(MEDIUM)
#define N 2000
#else
#define N 16000
#endif

void kernel_durbin(int n, double r[N], double y[N], double z[N])
{
  int i, k;
  double alpha, beta, sum;

#pragma scop
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];
  for (k = 1; k < n; k++) {
    beta = (1.0 - alpha * alpha) * beta;
    sum = 0.0;
    for (i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    alpha = -(r[k] + sum) / beta;
#ifdef OMP_FOR
#pragma omp parallel for
#endif
    for (i = 0; i < k; i++)
      z[i] = y[i] + alpha * y[k - i - 1];
    for (i = 0; i < k; i++)
      y[i] = z[i];
    y[k] = alpha;
  }
#pragma endscop
}

static double r[N], y[N], z[N];

int main(void)
{
  int i;
  double t0;

  for (i = 0; i < N; i++)
    r[i] = 0.5 / ((double)(i + 1) * (double)(i + 2));

  t0 = suite_now();
  kernel_durbin(N, r, y, z);
  suite_time(suite_now() - t0);

  suite_checksum("y", y, N);
  return 0;
}
