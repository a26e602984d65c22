/* ADI (alternating-direction implicit) scheme for the 2-D heat equation: per time step one
   tridiagonal system per row (Thomas algorithm: forward elimination into p and q, back
   substitution from the far boundary), then one per column.  The row loop and the column loop
   carry no dependence; their bodies are sequential recurrences. */
#include <stdio.h>
#ifndef N
#define N 200
#endif
#ifndef TSTEPS
#define TSTEPS 3
#endif

static void kernel_adi(int tsteps, int n, double u[N][N], double v[N][N], double p[N][N], double q[N][N])
{
  int t, i, j;
  double a, b, c;

  a = -0.25;
  b = 1.5;
  c = -0.25;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++) {
      v[0][i] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = v[0][i];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = -c / (a * p[i][j - 1] + b);
        q[i][j] = (u[j][i] - a * q[i][j - 1]) / (a * p[i][j - 1] + b);
      }
      v[n - 1][i] = 1.0;
      for (j = n - 2; j >= 1; j--)
        v[j][i] = p[i][j] * v[j + 1][i] + q[i][j];
    }
    for (i = 1; i < n - 1; i++) {
      u[i][0] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = -c / (a * p[i][j - 1] + b);
        q[i][j] = (v[i][j] - a * q[i][j - 1]) / (a * p[i][j - 1] + b);
      }
      u[i][n - 1] = 1.0;
      for (j = n - 2; j >= 1; j--)
        u[i][j] = p[i][j] * u[i][j + 1] + q[i][j];
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
    for (j = 0; j < N; j++)
      u[i][j] = (double)((i * 7 + j * 3) % 11) / 8.0;
  kernel_adi(TSTEPS, N, u, v, p, q);
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      s += u[i][j] * ((i + j) % 5) + v[i][j];
  printf("%.12g %.17g %.17g\n", s, u[N / 2][N / 3], v[N / 3][N / 2]);
  return 0;
}
