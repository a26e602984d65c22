/* doitgen (multiresolution analysis kernel): sum[p] is a row buffer written before it is read in
   every (r, q) iteration; it is private to each thread, and its last values are copied out. */
#include <stdio.h>
#define NR 40
#define NQ 30
#define NP 50
void kernel_doitgen(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP], double sum[NP]) {
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
int main(void) {
  static double A[NR][NQ][NP], C4[NP][NP], sum[NP];
  int i, j, k;
  for (i = 0; i < NR; i++) for (j = 0; j < NQ; j++) for (k = 0; k < NP; k++) A[i][j][k] = (i * j + k) % 5;
  for (i = 0; i < NP; i++) for (j = 0; j < NP; j++) C4[i][j] = (i * j) % 3;
  kernel_doitgen(NR, NQ, NP, A, C4, sum);
  double s = 0, w = 0;
  for (i = 0; i < NR; i++) for (j = 0; j < NQ; j++) for (k = 0; k < NP; k++) { s += A[i][j][k]; w += A[i][j][k] * (k % 7); }
  for (k = 0; k < NP; k++) w += sum[k] * k;
  printf("%.1f %.1f\n", s, w);
  return 0;
}
