/* nussinov: maximum number of nested base pairs of an RNA sequence (Nussinov's dynamic
 * program): T[i][j] is the best folding of seq[i..j], filled from the last row upwards. */
#include "suite.h"

#ifdef SMALL
#define N 60
#else
#define N 1100
#endif

void kernel_nussinov(int n, double seq[N], double T[N][N])
{
  int i, j, k;
  double best, pairing;

#pragma scop
  for (i = n - 2; i >= 0; i--)
    for (j = i + 1; j < n; j++) {
      best = T[i + 1][j] > T[i][j - 1] ? T[i + 1][j] : T[i][j - 1];
      pairing = T[i + 1][j - 1] + (seq[i] + seq[j] == 3.0 ? 1.0 : 0.0);
      best = pairing > best ? pairing : best;
      for (k = i + 1; k < j; k++)
        best = T[i][k] + T[k + 1][j] > best ? T[i][k] + T[k + 1][j] : best;
      T[i][j] = best;
    }
#pragma endscop
}

static double seq[N], T[N][N];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < N; i++) {
    seq[i] = (double)((i * 7 + i / 3) % 4);
    for (j = 0; j < N; j++)
      T[i][j] = 0.0;
  }

  t0 = suite_now();
  kernel_nussinov(N, seq, T);
  suite_time(suite_now() - t0);

  suite_checksum("T", &T[0][0], (long)N * N);
  return 0;
}
