/* Each row first adds the exit value of the previous row's inner iterator: a value that flows
   from one iteration of j to the next through 'i', which the model has no variable for. The j
   loop must neither run in parallel nor be distributed. */
#include <stdio.h>
#ifndef N
#define N 300
#endif

static double a[N][N], x[N];

static void rows(int n)
{
  int i, j;

  i = 0;
#pragma scop
  for (j = 0; j < n; j++) {
    x[j] = x[j] + i;
    for (i = 0; i < n; i++)
      a[j][i] = a[j][i] * 0.5 + x[j];
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  double s = 0.0;

  for (i = 0; i < N; i++) {
    x[i] = i % 3;
    for (j = 0; j < N; j++)
      a[i][j] = (i + j) % 4;
  }
  rows(N);
  for (i = 0; i < N; i++)
    s += x[i] * (i % 5);
  printf("%.12g %.17g %.17g\n", s, a[N - 1][N - 1], x[N - 1]);
  return 0;
}
