#include <stdio.h>
#define N 40
#define TSTEPS 4
static double u[N][N], v[N][N], p[N][N], q[N][N];
/* ADI as in the suite: the second sweep's parallel loop 'j' runs along the rows, which the OpenMP
   form takes in blocks; on the device each thread takes one 'j' of the loop as written. */
static void kernel_adi(int tsteps, int n) {
  int t, i, j;
  double mu = 0.5, diag = 2.0;
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
}
int main(void) {
  int i, j;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) u[i][j] = (double)(i + N - j) / N;
  kernel_adi(TSTEPS, N);
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) printf("%.15g %.15g\n", u[i][j], v[i][j]);
  return 0;
}
