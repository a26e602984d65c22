/* Gram-Schmidt's structure in integers (exact in any order): the column norm is a reduction kept
   on the host inside the k loop, the column scaling too little work for the device; both run as
   written between the device computations, with only the columns they touch copied. */
#include <stdio.h>
#define M 60
#define N 50
void kernel_gs_int(int m, int n, long A[M][N], long R[N][N], long Q[M][N]) {
  int i, j, k;
  long nrm;
#pragma scop
  for (k = 0; k < n; k++) {
    nrm = 0;
    for (i = 0; i < m; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = nrm % 13 + 1;
    for (i = 0; i < m; i++)
      Q[i][k] = A[i][k] % R[k][k];
    for (j = k + 1; j < n; j++) {
      R[k][j] = 0;
      for (i = 0; i < m; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (i = 0; i < m; i++)
        A[i][j] = (A[i][j] - Q[i][k] * (R[k][j] % 5)) % 1000;
    }
  }
#pragma endscop
}
int main(void) {
  static long A[M][N], R[N][N], Q[M][N];
  long s = 0;
  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) A[i][j] = (i * 7 + j * 13) % 31 - 15;
  kernel_gs_int(M, N, A, R, Q);
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += R[i][j] * (i % 3 + 1);
  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) s += Q[i][j] * (j % 5 + 1) + A[i][j];
  printf("%ld\n", s);
  return 0;
}
