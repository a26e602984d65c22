/* ADI written the other common way: the row sweep solves along each row (i parallel, j
   sequential), the column sweep along each column (j parallel, i sequential, striding over
   rows). The column loop's iterations are taken in blocks inside its recurrences, so that the
   innermost loops run along rows. N - 2 is no multiple of the block. */
#include <stdio.h>
#ifndef N
#define N 203
#endif
#ifndef TSTEPS
#define TSTEPS 3
#endif

static void kernel_adi_columns(int tsteps, int n, double u[N][N], double v[N][N], double p[N][N],
                               double q[N][N])
{
  int t, i, j;
  double mu, diag;

  mu = 0.5;
  diag = 1.0 + 2.0 * mu;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++) {
      v[i][0] = u[i][0];
      v[i][n - 1] = u[i][n - 1];
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = mu / (diag - mu * p[i][j - 1]);
        q[i][j] = (u[i][j] + mu * q[i][j - 1]) / (diag - mu * p[i][j - 1]);
      }
      for (j = n - 2; j >= 1; j--)
        v[i][j] = p[i][j] * v[i][j + 1] + q[i][j];
    }
    for (j = 1; j < n - 1; j++) {
      u[0][j] = v[0][j];
      u[n - 1][j] = v[n - 1][j];
      p[0][j] = 0.0;
      q[0][j] = v[0][j];
      for (i = 1; i < n - 1; i++) {
        p[i][j] = mu / (diag - mu * p[i - 1][j]);
        q[i][j] = (v[i][j] + mu * q[i - 1][j]) / (diag - mu * p[i - 1][j]);
      }
      for (i = n - 2; i >= 1; i--)
        u[i][j] = p[i][j] * u[i + 1][j] + q[i][j];
    }
  }
#pragma endscop
}

static double u[N][N], v[N][N], p[N][N], q[N][N];

int main(void)
{
  int i, j;
  double s = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      u[i][j] = (double)((i * 5 + N - j) % 13) / 4.0;
      v[i][j] = u[i][j];
    }
  kernel_adi_columns(TSTEPS, N, u, v, p, q);
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      s += u[i][j] * ((2 * i + j) % 7) - v[i][j];
  printf("%.12g %.17g %.17g %.17g\n", s, u[N / 2][N - 2], u[N - 2][1], v[N / 3][N / 4]);
  return 0;
}
