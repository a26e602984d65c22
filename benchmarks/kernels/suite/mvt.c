/* mvt: x1 := x1 + A y1 and x2 := x2 + A^T y2. */
#include "suite.h"

#ifdef SMALL
#define N 90
#define CALLS 1
#else
#define N 3000
#define CALLS 8
#endif

void kernel_mvt(int n, double x1[N], double x2[N], double y_1[N], double y_2[N], double A[N][N])
{
  int i, j;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
#pragma endscop
}

static double x1[N], x2[N], y_1[N], y_2[N], A[N][N];

int main(void)
{
  int i, j, r;
  double t0;

  for (i = 0; i < N; i++) {
    x1[i] = (double)(i % N) / N;
    x2[i] = (double)((i + 1) % N) / N;
    y_1[i] = (double)((i + 3) % N) / N;
    y_2[i] = (double)((i + 4) % N) / N;
    for (j = 0; j < N; j++)
      A[i][j] = (double)(i * j % N) / N;
  }

  t0 = suite_now();
  for (r = 0; r < CALLS; r++)
    kernel_mvt(N, x1, x2, y_1, y_2, A);
  suite_time(suite_now() - t0);

  suite_checksum("x1", x1, N);
  suite_checksum("x2", x2, N);
  return 0;
}
