/* jacobi_1d: 3-point Jacobi relaxation in 1-D, two sweeps (A -> B, B -> A) per time step. */
#include "suite.h"

#ifdef SMALL
#define N 300
#define TSTEPS 20
#else
#define N 400000
#define TSTEPS 800
#endif

void kernel_jacobi_1d(int tsteps, int n, double A[N], double B[N])
{
  int t, i;

#pragma scop
  for (t = 0; t < tsteps; t++) {
#ifdef OMP_FOR
#pragma omp parallel for
#endif
    for (i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
#ifdef OMP_FOR
#pragma omp parallel for
#endif
    for (i = 1; i < n - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
#pragma endscop
}

static double A[N], B[N];

int main(void)
{
  int i;
  double t0;

  for (i = 0; i < N; i++) {
    A[i] = (double)(i % 23) + 2.0;
    B[i] = (double)(i % 19) + 3.0;
  }

  t0 = suite_now();
  kernel_jacobi_1d(TSTEPS, N, A, B);
  suite_time(suite_now() - t0);

  suite_checksum("A", A, N);
  suite_checksum("B", B, N);
  return 0;
}
