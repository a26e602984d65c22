/* An integer dot product per row, s = A[i] . x, whose value a host statement stores into x:
   the next rows read it, so the row loop is sequential. */
#include <stdio.h>
#ifndef N
#define N 400
#endif
#ifndef M
#define M 6000
#endif
void kernel_rowdot(int n, int m, long A[N][M], long x[M]) {
  int i, j;
  long s;
#pragma scop
  for (i = 0; i < n; i++) {
    s = 0;
    for (j = 0; j < m; j++)
      s += A[i][j] * x[j];
    x[i] = s % 1024;
  }
#pragma endscop
  printf("i=%d j=%d s=%ld\n", i, j, s);
}
static long A[N][M], x[M];
int main(void) {
  long t = 0;
  int i, j;
  for (j = 0; j < M; j++)
    x[j] = j % 17;
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      A[i][j] = (i + 2 * j) % 9 - 4;
  kernel_rowdot(N, M, A, x);
  for (j = 0; j < M; j++)
    t += x[j] * (j % 7 + 1);
  printf("%ld %ld %ld\n", t, x[0], x[N - 1]);
  return 0;
}
