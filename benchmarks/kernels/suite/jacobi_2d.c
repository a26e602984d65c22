/* jacobi_2d: 5-point Jacobi relaxation in 2-D, two sweeps (A -> B, B -> A) per time step. */
#include "suite.h"

#ifdef SMALL
#define N 40
#define TSTEPS 10
#else
#define N 1300
#define TSTEPS 100
#endif

void kernel_jacobi_2d(int tsteps, int n, double A[N][N], double B[N][N])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < tsteps; t++) {
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
#pragma endscop
}

static double A[N][N], B[N][N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = (double)((i * (j + 2)) % 31) + 2.0;
      B[i][j] = (double)((i * (j + 3)) % 29) + 3.0;
    }

  t0 = suite_now();
  kernel_jacobi_2d(TSTEPS, N, A, B);
  suite_time(suite_now() - t0);

  suite_checksum("A", &A[0][0], (long)N * N);
  suite_checksum("B", &B[0][0], (long)N * N);
  return 0;
}
