/* doitgen: multiresolution analysis kernel, A[r][q][:] := A[r][q][:] . C4 for every (r, q),
 * through a row buffer sum[]. */
#include "suite.h"

#ifdef SMALL
#define NR 10
#define NQ 12
#define NP 14
#else
#define NR 150
#define NQ 160
#define NP 180
#endif

void kernel_doitgen(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP], double sum[NP])
{
  int r, q, p, s;

#pragma scop
  for (r = 0; r < nr; r++)
    for (q = 0; q < nq; q++) {
      for (p = 0; p < np; p++) {
        sum[p] = 0.0;
        for (s = 0; s < np; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < np; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}

static double A[NR][NQ][NP], C4[NP][NP], sum[NP];

int main(void)
{
  int i, j, k;
  double t0;

  for (i = 0; i < NR; i++)
    for (j = 0; j < NQ; j++)
      for (k = 0; k < NP; k++)
        A[i][j][k] = (double)((i * j + k) % NP) / NP;
  for (i = 0; i < NP; i++)
    for (j = 0; j < NP; j++)
      C4[i][j] = (double)(i * j % NP) / NP;

  t0 = suite_now();
  kernel_doitgen(NR, NQ, NP, A, C4, sum);
  suite_time(suite_now() - t0);

  suite_checksum("A", &A[0][0][0], (long)NR * NQ * NP);
  return 0;
}
