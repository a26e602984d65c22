/* 2mm: D := alpha A B C + beta D, through the temporary tmp := alpha A B. */
#include "suite.h"

#ifdef SMALL
#define NI 40
#define NJ 50
#define NK 60
#define NL 70
#else
#define NI 600
#define NJ 650
#define NK 700
#define NL 750
#endif

void kernel_2mm(int ni, int nj, int nk, int nl, double alpha, double beta,
                double tmp[NI][NJ], double A[NI][NK], double B[NK][NJ],
                double C[NJ][NL], double D[NI][NL])
{
  int i, j, k;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      tmp[i][j] = 0.0;
      for (k = 0; k < nk; k++)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      D[i][j] *= beta;
      for (k = 0; k < nj; k++)
        D[i][j] += tmp[i][k] * C[k][j];
    }
#pragma endscop
}

static double tmp[NI][NJ], A[NI][NK], B[NK][NJ], C[NJ][NL], D[NI][NL];

int main(void)
{
  int i, j;
  double alpha = 1.5, beta = 1.2, t0;

  for (i = 0; i < NI; i++)
    for (j = 0; j < NK; j++)
      A[i][j] = (double)((i * j + 1) % NI) / NI;
  for (i = 0; i < NK; i++)
    for (j = 0; j < NJ; j++)
      B[i][j] = (double)(i * (j + 1) % NJ) / NJ;
  for (i = 0; i < NJ; i++)
    for (j = 0; j < NL; j++)
      C[i][j] = (double)((i * (j + 3) + 1) % NL) / NL;
  for (i = 0; i < NI; i++)
    for (j = 0; j < NL; j++)
      D[i][j] = (double)(i * (j + 2) % NK) / NK;

  t0 = suite_now();
  kernel_2mm(NI, NJ, NK, NL, alpha, beta, tmp, A, B, C, D);
  suite_time(suite_now() - t0);

  suite_checksum("D", &D[0][0], (long)NI * NL);
  suite_checksum("tmp", &tmp[0][0], (long)NI * NJ);
  return 0;
}
