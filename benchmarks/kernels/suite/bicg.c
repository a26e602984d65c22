/* bicg: the two products of BiCG's inner step, s := A^T r and q := A p, in one sweep over A. */
#include "suite.h"

#ifdef SMALL
#define M 80
#define N 90
#define CALLS 1
#else
#define M 2800
#define N 3000
#define CALLS 12
#endif

void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N], double p[M], double r[N])
{
  int i, j;

#pragma scop
  for (i = 0; i < m; i++)
    s[i] = 0;
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
#pragma endscop
}

static double A[N][M], s[M], q[N], p[M], r[N];

int main(void)
{
  int i, j, c;
  double t0;

  for (i = 0; i < M; i++)
    p[i] = (double)(i % M) / M;
  for (i = 0; i < N; i++) {
    r[i] = (double)(i % N) / N;
    for (j = 0; j < M; j++)
      A[i][j] = (double)(i * (j + 1) % N) / N;
  }

  t0 = suite_now();
  for (c = 0; c < CALLS; c++)
    kernel_bicg(M, N, A, s, q, p, r);
  suite_time(suite_now() - t0);

  suite_checksum("s", s, M);
  suite_checksum("q", q, N);
  return 0;
}
