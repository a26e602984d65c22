/* 3mm: G := (A B) (C D), through E := A B and F := C D. */
#include "suite.h"

#ifdef SMALL
#define NI 40
#define NJ 45
#define NK 50
#define NL 55
#define NM 60
#else
#define NI 500
#define NJ 550
#define NK 600
#define NL 650
#define NM 700
#endif

void kernel_3mm(int ni, int nj, int nk, int nl, int nm,
                double E[NI][NJ], double A[NI][NK], double B[NK][NJ],
                double F[NJ][NL], double C[NJ][NM], double D[NM][NL], double G[NI][NL])
{
  int i, j, k;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      E[i][j] = 0.0;
      for (k = 0; k < nk; k++)
        E[i][j] += A[i][k] * B[k][j];
    }
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++) {
      F[i][j] = 0.0;
      for (k = 0; k < nm; k++)
        F[i][j] += C[i][k] * D[k][j];
    }
#ifdef OMP_FOR
#pragma omp parallel for private(j, k)
#endif
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      G[i][j] = 0.0;
      for (k = 0; k < nj; k++)
        G[i][j] += E[i][k] * F[k][j];
    }
#pragma endscop
}

static double E[NI][NJ], A[NI][NK], B[NK][NJ], F[NJ][NL], C[NJ][NM], D[NM][NL], G[NI][NL];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < NI; i++)
    for (j = 0; j < NK; j++)
      A[i][j] = (double)((i * j + 1) % NI) / (5 * NI);
  for (i = 0; i < NK; i++)
    for (j = 0; j < NJ; j++)
      B[i][j] = (double)((i * (j + 1) + 2) % NJ) / (5 * NJ);
  for (i = 0; i < NJ; i++)
    for (j = 0; j < NM; j++)
      C[i][j] = (double)(i * (j + 3) % NL) / (5 * NL);
  for (i = 0; i < NM; i++)
    for (j = 0; j < NL; j++)
      D[i][j] = (double)((i * (j + 2) + 2) % NK) / (5 * NK);

  t0 = suite_now();
  kernel_3mm(NI, NJ, NK, NL, NM, E, A, B, F, C, D, G);
  suite_time(suite_now() - t0);

  suite_checksum("G", &G[0][0], (long)NI * NL);
  suite_checksum("E", &E[0][0], (long)NI * NJ);
  suite_checksum("F", &F[0][0], (long)NJ * NL);
  return 0;
}
