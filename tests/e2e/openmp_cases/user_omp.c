/* The user's OpenMP next to mdpoly's: loops under the user's pragmas, in a region, and around. */
#include <stdio.h>
#define N 400
static float A[N][N], B[N][N], C[N][N];
static float x[N], y[N];

void user_loop(void) {
  #pragma omp parallel for
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = A[i][j] + B[j][i];
}

void in_region(void) {
  #pragma omp parallel
  {
    #pragma omp for
    for (int i = 0; i < N; i++)
      x[i] = A[i][0] * 2.0f;
    #pragma omp single
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        B[i][j] = B[i][j] * 0.5f;
    #pragma omp for
    for (int i = 0; i < N; i++) {
      float s = 0;
      for (int j = 0; j < N; j++)
        s += B[i][j];
      y[i] = s;
    }
  }
}

void inner_user(int T) {
  for (int t = 0; t < T; t++) {
    #pragma omp parallel for
    for (int i = 0; i < N; i++)
      y[i] = y[i] + x[i];
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        A[i][j] = A[i][j] + y[i] * 0.001f;
  }
}

void simd_loop(void) {
  #pragma omp simd
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = C[i][j] + A[j][i];
}

void racy_user(void) {
  #pragma omp parallel for ordered
  for (int i = 1; i < N; i++) {
    #pragma omp ordered
    x[i] = x[i - 1] * 0.5f + y[i];
  }
}

int main(void) {
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 7); y[i] = (float)(i % 5);
    for (int j = 0; j < N; j++) { A[i][j] = (float)((i * 3 + j) % 11); B[i][j] = (float)((i + 2 * j) % 13); }
  }
  user_loop(); in_region(); inner_user(3); simd_loop(); racy_user();
  double s = 0;
  for (int i = 0; i < N; i++) {
    s += x[i] + y[i];
    for (int j = 0; j < N; j++) s += A[i][j] + 2.0 * B[i][j] + 3.0 * C[i][j];
  }
  printf("%.6e\n%.6e %.6e %.6e\n", s, (double)C[7][9], (double)A[5][3], (double)x[N - 1]);
  return 0;
}
