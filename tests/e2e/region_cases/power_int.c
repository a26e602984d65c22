/* A reduction inside the time loop: y = A x (j reduced, i parallel), then x from y. */
#include <stdio.h>
#ifndef N
#define N 301
#endif
void kernel_power(int tsteps, int n, int A[N][N], int x[N], int y[N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 0; i < n; i++) {
      y[i] = 0;
      for (j = 0; j < n; j++)
        y[i] += A[i][j] * x[j];
    }
    for (i = 0; i < n; i++)
      x[i] = y[i] % 17 + t;
  }
#pragma endscop
}
int main(void) {
  static int A[N][N], x[N], y[N];
  long s = 0;
  for (int i = 0; i < N; i++) { x[i] = i % 3; for (int j = 0; j < N; j++) A[i][j] = (i * j + 1) % 4; }
  kernel_power(11, N, A, x, y);
  for (int i = 0; i < N; i++) s += (long) x[i] * (i + 1) + y[i];
  printf("%ld\n", s);
  return 0;
}
