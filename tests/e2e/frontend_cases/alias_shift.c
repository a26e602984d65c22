/* Pointer parameters that overlap at run time: the guard must run the original nest. */
#include <stdio.h>
#define N 1000

static void scale(int n, float *a, const float *b) {
  for (int i = 0; i < n; i++)
    a[i] = b[i] * 0.5f + 1.0f;
}

static void matvec(int n, float *y, float *A, float *x) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      y[i] += A[i * 0 + j] * x[j];
}

static void rows(int n, float **A, float *x, float *y) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      y[i] += A[i][j] * x[j];
}

float buf[N + 8], other[N + 8], M[64 * 64];
float *R[64];

int main(void) {
  for (int k = 0; k < N + 8; k++) { buf[k] = (float)(k % 7); other[k] = (float)(k % 5); }
  scale(N, buf + 1, buf);          /* overlapping: a sequential recurrence */
  scale(N, other, buf + 4);        /* disjoint */
  for (int k = 0; k < N + 8; k += 97) printf("%d %g %g\n", k, buf[k], other[k]);
  for (int k = 0; k < 64 * 64; k++) M[k] = (float)((k * 3) % 11) * 0.25f;
  matvec(64, M, M + 64, M + 32);   /* y, A and x all inside M */
  for (int k = 0; k < 64; k++) printf("%g\n", M[k]);
  for (int r = 0; r < 64; r++) R[r] = M + 64 * r;
  rows(63, R, M + 1, R[5]);        /* y is one of the rows */
  rows(63, R + 1, other, buf);     /* disjoint */
  for (int k = 0; k < 64; k++) printf("%g %g\n", R[5][k], buf[k]);
  return 0;
}
