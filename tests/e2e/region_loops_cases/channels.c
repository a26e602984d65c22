/* Three channels, each filtered by two sweeps: the channel loop carries no dependence, but with
   only three iterations it is a poor parallel loop; it stays a host loop around two computations
   (its local weight keeps its body from being distributed). */
#include <stdio.h>
#ifndef N
#define N 500
#endif

static double A[3][N][N], B[3][N][N];

static void filter(int n)
{
  int c, i, j;
#pragma scop
  for (c = 0; c < 3; c++) {
    double w = c * 0.5;
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        B[c][i][j] = A[c][i][j] * 2.0 + w;
    for (i = 1; i < n; i++)
      for (j = 0; j < n; j++)
        A[c][i][j] = B[c][i - 1][j] + B[c][i][j];
  }
#pragma endscop
}

int main(void)
{
  int c, i, j;
  double s = 0.0;

  for (c = 0; c < 3; c++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        A[c][i][j] = (double)((i + j + c) % 5);
  filter(N);
  for (c = 0; c < 3; c++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        s += A[c][i][j] * ((i + j) % 3);
  printf("%.12g %.17g\n", s, A[2][N - 1][N - 2]);
  return 0;
}
