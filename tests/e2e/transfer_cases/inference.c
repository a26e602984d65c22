/* An inference-style loop: 20 steps, each calling matvec on the same weights W (never changed),
   with a new input vector each step. With KEEP, the weights stay on the device between the calls
   (mdp_resident_keep, available in mdpoly's GPU output). All values are small integers, so every
   sum is exact whatever the order. */
#include <stdio.h>
#define N 96
#define M 80
void matvec(int n, int m, double W[N][M], double x[M], double y[N]) {
  int i, j;
#pragma mdh(y[i] : ++, +)
  for (i = 0; i < n; i++) {
    y[i] = 0.0;
    for (j = 0; j < m; j++)
      y[i] += W[i][j] * x[j];
  }
}
int main(void) {
  static double W[N][M], x[M], y[N];
  double s = 0;
  int t, i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      W[i][j] = (double)((i * 5 + j * 3) % 7 - 3);
  for (j = 0; j < M; j++)
    x[j] = (double)(j % 5 - 2);
#if defined(KEEP) && defined(MDP_RESIDENT_API)
  mdp_resident_keep(W, sizeof W);
#endif
  for (t = 0; t < 20; t++) {
    matvec(N, M, W, x, y);
    s += y[t % N];
    for (j = 0; j < M; j++)
      x[j] = (double)((long)y[(j + t) % N] % 5);
  }
#if defined(KEEP) && defined(MDP_RESIDENT_API)
  mdp_resident_release(W);
#endif
  for (i = 0; i < N; i++)
    s += y[i] * (i % 3 + 1);
  printf("%.1f\n", s);
  return 0;
}
