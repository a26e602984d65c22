/* Per time step, every row is shifted by its mean: the scalar s is recomputed in each iteration of
   the row loop (it must be private to each thread) and is read after the nest (its last value). */
#include <stdio.h>
#ifndef N
#define N 256
#endif
#ifndef TSTEPS
#define TSTEPS 3
#endif

static double run(int tsteps, int n, double A[N][N], double B[N][N])
{
  int t, i, j;
  double s;

  s = 0.0;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 0; i < n; i++) {
      s = 0.0;
      for (j = 0; j < n; j++)
        s += A[i][j];
      for (j = 0; j < n; j++)
        B[i][j] = A[i][j] * n - s;
    }
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        A[i][j] = B[i][n - 1 - j] / n + t;
  }
#pragma endscop
  return s;
}

static double A[N][N], B[N][N];

int main(void)
{
  int i, j;
  long sum = 0;
  double s;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (double)((i * 3 + j * 5) % 9);
  s = run(TSTEPS, N, A, B);
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      sum += (long)A[i][j] * ((i + j) % 3);
  printf("%.17g %ld %.17g\n", s, sum, B[N - 1][N - 1]);
  return 0;
}
