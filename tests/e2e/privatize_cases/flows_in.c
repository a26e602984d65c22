/* tmp carries a value from one r iteration to the next (it is never reset): not privatizable. */
#include <stdio.h>
#define NR 40
#define NP 50
void kernel_flows(int nr, int np, double A[NR][NP], double B[NR][NP], double tmp[NP]) {
  int r, p;
#pragma scop
  for (r = 0; r < nr; r++) {
    for (p = 0; p < np; p++)
      tmp[p] = tmp[p] * 0.5 + A[r][p];
    for (p = 0; p < np; p++)
      B[r][p] = tmp[p] * 2.0;
  }
#pragma endscop
}
int main(void) {
  static double A[NR][NP], B[NR][NP], tmp[NP];
  int i, j;
  for (i = 0; i < NR; i++) for (j = 0; j < NP; j++) A[i][j] = (i + j) % 4;
  for (j = 0; j < NP; j++) tmp[j] = j % 3;
  kernel_flows(NR, NP, A, B, tmp);
  double s = 0;
  for (i = 0; i < NR; i++) for (j = 0; j < NP; j++) s += B[i][j] * ((i * j) % 5 + 1);
  for (j = 0; j < NP; j++) s += tmp[j];
  printf("%.6f\n", s);
  return 0;
}
