/* Every r iteration writes tmp before reading it, but the later iterations write fewer elements:
   after the nest tmp[p] holds what the last iteration that wrote it left there, not what the
   last iteration wrote. Privatization is refused. */
#include <stdio.h>
#define NR 40
#define NP 50
void kernel_shrink(int nr, int np, double A[NR][NP], double B[NR][NP], double tmp[NP]) {
  int r, p;
#pragma scop
  for (r = 0; r < nr; r++) {
    for (p = 0; p < np - r; p++)
      tmp[p] = A[r][p] + r;
    for (p = 0; p < np - r; p++)
      B[r][p] = tmp[p] * 2.0;
  }
#pragma endscop
}
int main(void) {
  static double A[NR][NP], B[NR][NP], tmp[NP];
  int i, j;
  for (i = 0; i < NR; i++) for (j = 0; j < NP; j++) A[i][j] = (i * j) % 7;
  kernel_shrink(NR, NP, A, B, tmp);
  double s = 0;
  for (i = 0; i < NR; i++) for (j = 0; j < NP; j++) s += B[i][j] * ((i + j) % 5 + 1);
  for (j = 0; j < NP; j++) s += tmp[j] * (j + 1);
  printf("%.6f\n", s);
  return 0;
}
