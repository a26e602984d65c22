/* Local scalar accumulators: declared in the nest, reduced over inner loops, then stored. */
#include <stdio.h>
#define N 48
#define M 40
#define K 56

float A[N][K], B[K][M], C[N][M], D[N][M], E[N][M];
double dsum[N];
float alpha = 1.5f, beta = -0.5f;

int main(void) {
  for (int i = 0; i < N; i++)
    for (int k = 0; k < K; k++) A[i][k] = (float)((i * 7 + k * 3) % 13) * 0.125f;
  for (int k = 0; k < K; k++)
    for (int j = 0; j < M; j++) B[k][j] = (float)((k * 5 + j) % 11) * 0.25f;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) { D[i][j] = (float)(i - j); E[i][j] = 1.0f; }

  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      float s = 0;
      for (int k = 0; k < K; k++)
        s += A[i][k] * B[k][j];
      C[i][j] = s;
    }

  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      float s = 0.0f;
      for (int k = 0; k < K; k++)
        s += A[i][k] * B[k][j];
      D[i][j] = alpha * s + beta * D[i][j];
    }

  for (int i = 0; i < N; i++) {
    double m = -1e30;
    for (int k = 0; k < K; k++)
      m = A[i][k] > m ? A[i][k] : m;
    dsum[i] = m;
  }

  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      float t = 1.0f;
      for (int k = 0; k < 4; k++)
        t *= B[k][j] + 1.0f;
      E[i][j] += t;
    }

  double tot = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) tot += C[i][j] + 2 * D[i][j] + 3 * E[i][j];
  printf("%.6g\n", tot);
  for (int i = 0; i < N; i += 7) printf("%g %g %g %g\n", C[i][i % M], D[i][3], E[i][5], dsum[i]);
  return 0;
}
