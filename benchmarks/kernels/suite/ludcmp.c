/* ludcmp: solve A x = b by LU factorization in place (no pivoting, A diagonally dominant),
 * forward substitution L y = b and backward substitution U x = y. */
#include "suite.h"

#ifdef SMALL
#define N 80
#else
#define N 1400
#endif

void kernel_ludcmp(int n, double A[N][N], double b[N], double x[N], double y[N])
{
  int i, j, k;

#pragma scop
  for (k = 0; k < n; k++) {
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j < n; j++)
        A[i][j] = A[i][j] - A[i][k] * A[k][j];
  }
  for (i = 0; i < n; i++) {
    y[i] = b[i];
    for (j = 0; j < i; j++)
      y[i] = y[i] - A[i][j] * y[j];
  }
  for (i = n - 1; i >= 0; i--) {
    x[i] = y[i];
    for (j = i + 1; j < n; j++)
      x[i] = x[i] - A[i][j] * x[j];
    x[i] = x[i] / A[i][i];
  }
#pragma endscop
}

static double A[N][N], b[N], x[N], y[N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++) {
    b[i] = 1.0 + (double)(i % 10) / 10.0;
    for (j = 0; j < N; j++)
      A[i][j] = i == j ? (double)N : (double)((i * 5 + j * 3) % 13) / 13.0 - 0.5;
  }

  t0 = suite_now();
  kernel_ludcmp(N, A, b, x, y);
  suite_time(suite_now() - t0);

  suite_checksum("x", x, N);
  suite_checksum("A", &A[0][0], (long)N * N);
  return 0;
}
