/* Everyday C: iterators declared at function top, <= N-1 bounds, ++i, in-place updates,
   casts, const-int bounds, an existing OpenMP pragma. */
#include <stdio.h>
#define N 300

float A[N][N], v[N];
int hist[N];

int main(void) {
  int i, j;
  const int n = 200;
  for (i = 0; i <= N - 1; ++i)
    for (j = 0; j <= N - 1; ++j)
      A[i][j] = (float)((i * 3 + j) % 17) * 0.5f;
  printf("i=%d j=%d\n", i, j);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = A[i][j] * 2;
  #pragma omp parallel for
  for (int k = 0; k < N; k++)
    v[k] = (float)k / 3.0f;
  for (i = 1; i < n; i++)
    hist[i] = (int)(A[i][i] * 10.0f) + (int)v[i];
  printf("i=%d\n", i);
  double s = 0.0;
  for (i = 0; i < N; i++)
    s += (double)A[i][N - 1 - i] * v[i];
  printf("%.6f %d %d %g\n", s, hist[5], hist[199], A[10][10]);
  return 0;
}
