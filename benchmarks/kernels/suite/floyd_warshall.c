/* floyd_warshall: all-pairs shortest path lengths, relaxing through each vertex k in turn. */
#include "suite.h"

#ifdef SMALL
#define N 60
#else
#define N 900
#endif

void kernel_floyd_warshall(int n, double path[N][N])
{
  int i, j, k;

#pragma scop
  for (k = 0; k < n; k++) {
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
  }
#pragma endscop
}

static double path[N][N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      path[i][j] = i == j ? 0.0 : (double)((i * 7 + j * 13) % 29 + 1) * ((i + j) % 5 == 0 ? 50.0 : 1.0);

  t0 = suite_now();
  kernel_floyd_warshall(N, path);
  suite_time(suite_now() - t0);

  suite_checksum("path", &path[0][0], (long)N * N);
  return 0;
}
