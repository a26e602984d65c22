/* Levinson-Durbin recursion: solves the Yule-Walker system T y = -r, T the symmetric Toeplitz
   matrix with first row (1, r[0], ..., r[n-2]); per step k a dot product of r and y (reduced),
   then the y update through a temporary z. */
#include <stdio.h>
#ifndef N
#define N 2500
#endif
void kernel_durbin(int n, double r[N], double y[N], double z[N]) {
  int i, k;
  double alpha, beta, sum;
#pragma scop
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];
  for (k = 1; k < n; k++) {
    beta = (1.0 - alpha * alpha) * beta;
    sum = 0.0;
    for (i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    alpha = -(r[k] + sum) / beta;
    for (i = 0; i < k; i++)
      z[i] = y[i] + alpha * y[k - i - 1];
    for (i = 0; i < k; i++)
      y[i] = z[i];
    y[k] = alpha;
  }
#pragma endscop
}
static double r[N], y[N], z[N];
int main(void) {
  int i;
  double s = 0.0;
  for (i = 0; i < N; i++)
    r[i] = 0.5 / ((double) (i + 1) * (double) (i + 2));
  kernel_durbin(N, r, y, z);
  for (i = 0; i < N; i++)
    s += y[i] * (double) (i % 5 + 1);
  printf("%.12e %.12e %.12e %.12e\n", s, y[0], y[N / 2], y[N - 1]);
  return 0;
}
