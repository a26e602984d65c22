/* A scalar temporary (a row's sum) reset in every r iteration: private to each thread; its last
   value and r's exit value are printed after the nest. */
#include <stdio.h>
#define NR 300
#define NP 200
double A[NR][NP], B[NR][NP];
void kernel_norm(int nr, int np) {
  int r, p;
  double s;
#pragma scop
  for (r = 0; r < nr; r++) {
    s = 1.0;
    for (p = 0; p < np; p++)
      s += A[r][p];
    for (p = 0; p < np; p++)
      B[r][p] = A[r][p] * s;
  }
#pragma endscop
  printf("s=%.3f r=%d\n", s, r);
}
int main(void) {
  int i, j;
  for (i = 0; i < NR; i++) for (j = 0; j < NP; j++) A[i][j] = (i * j) % 7;
  kernel_norm(NR, NP);
  double t = 0;
  for (i = 0; i < NR; i++) for (j = 0; j < NP; j++) t += B[i][j] * ((i + j) % 3);
  printf("%.3f\n", t);
  return 0;
}
