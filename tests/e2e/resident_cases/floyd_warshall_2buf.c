/* Floyd-Warshall with the k-th relaxation written into a second matrix and copied back: the
   i, j loops of each step are parallel, the k loop stays on the host. */
#include <stdio.h>
#define N 60
void kernel_floyd_warshall(int n, int D[N][N], int E[N][N]) {
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++) {
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        E[i][j] = D[i][j] < D[i][k] + D[k][j] ? D[i][j] : D[i][k] + D[k][j];
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        D[i][j] = E[i][j];
  }
#pragma endscop
}
int main(void) {
  static int D[N][N], E[N][N];
  long s = 0, w = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) {
    D[i][j] = i * j % 7 + 1;
    if ((i + j) % 13 == 0 || (i + j) % 7 == 0 || (i + j) % 11 == 0) D[i][j] = 999;
  }
  kernel_floyd_warshall(N, D, E);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { s += D[i][j]; w += D[i][j] * (i % 3 + j); }
  printf("%ld %ld\n", s, w);
  return 0;
}
