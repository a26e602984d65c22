/* Forward substitution L x = b for a unit lower triangular L (textbook row form), in unsigned
   arithmetic: every sum is exact modulo 2^32, so any order of the additions gives the same x. */
#include <stdio.h>
#ifndef N
#define N 3001
#endif
void kernel_trisolv(int n, unsigned L[N][N], unsigned x[N], unsigned b[N]) {
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
  printf("i=%d j=%d\n", i, j);
}
static unsigned L[N][N], x[N], b[N];
int main(void) {
  unsigned long s = 0;
  int i, j;
  for (i = 0; i < N; i++) {
    b[i] = (unsigned) (i % 7) + 1u;
    for (j = 0; j < i; j++)
      L[i][j] = (unsigned) ((i * 3 + j * 5) % 11);
    L[i][i] = 1u;
  }
  kernel_trisolv(N, L, x, b);
  for (i = 0; i < N; i++)
    s += (unsigned long) x[i] * (unsigned long) (i % 13 + 1);
  printf("%lu %u %u\n", s, x[N / 2], x[N - 1]);
  return 0;
}
