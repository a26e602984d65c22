/* gemm: C := alpha * A * B + beta * C (general matrix-matrix product). */
#include "suite.h"

#ifdef SMALL
#define NI 60
#define NJ 70
#define NK 80
#else
#define NI 1000
#define NJ 1100
#define NK 1200
#endif

void kernel_gemm(int ni, int nj, int nk, double alpha, double beta,
                 double C[NI][NJ], double A[NI][NK], double B[NK][NJ])
{
  int i, j, k;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}

static double C[NI][NJ], A[NI][NK], B[NK][NJ];

int main(void)
{
  int i, j;
  double alpha = 1.5, beta = 1.2, t0;

  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++)
      C[i][j] = (double)((i * j + 1) % NI) / NI;
  for (i = 0; i < NI; i++)
    for (j = 0; j < NK; j++)
      A[i][j] = (double)(i * (j + 1) % NK) / NK;
  for (i = 0; i < NK; i++)
    for (j = 0; j < NJ; j++)
      B[i][j] = (double)(i * (j + 2) % NJ) / NJ;

  t0 = suite_now();
  kernel_gemm(NI, NJ, NK, alpha, beta, C, A, B);
  suite_time(suite_now() - t0);

  suite_checksum("C", &C[0][0], (long)NI * NJ);
  return 0;
}
