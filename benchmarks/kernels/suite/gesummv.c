/* gesummv: y := alpha A x + beta B x (two matrix-vector products summed). */
#include "suite.h"

#ifdef SMALL
#define N 90
#define CALLS 1
#else
#define N 3000
#define CALLS 12
#endif

void kernel_gesummv(int n, double alpha, double beta, double A[N][N], double B[N][N],
                    double tmp[N], double x[N], double y[N])
{
  int i, j;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
#pragma endscop
}

static double A[N][N], B[N][N], tmp[N], x[N], y[N];

int main(void)
{
  int i, j, r;
  int n = N;
  double alpha = 1.5, beta = 1.2, t0;

  for (i = 0; i < n; i++) {
    x[i] = (double)(i % n) / n;
    for (j = 0; j < n; j++) {
      A[i][j] = (double)((i * j + 1) % n) / n;
      B[i][j] = (double)((i * j + 2) % n) / n;
    }
  }

  t0 = suite_now();
  for (r = 0; r < CALLS; r++)
    kernel_gesummv(n, alpha, beta, A, B, tmp, x, y);
  suite_time(suite_now() - t0);

  suite_checksum("y", y, N);
  suite_checksum("tmp", tmp, N);
  return 0;
}
