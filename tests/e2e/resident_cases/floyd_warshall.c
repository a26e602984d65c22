#include <stdio.h>
#define N 60
void kernel_floyd_warshall(int n, int path[N][N]) {
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++) {
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
  }
#pragma endscop
}
int main(void) {
  static int path[N][N];
  long s = 0, w = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) {
    path[i][j] = i * j % 7 + 1;
    if ((i + j) % 13 == 0 || (i + j) % 7 == 0 || (i + j) % 11 == 0) path[i][j] = 999;
  }
  kernel_floyd_warshall(N, path);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { s += path[i][j]; w += path[i][j] * (i % 3 + j); }
  printf("%ld %ld\n", s, w);
  return 0;
}
