/* Loops that keep their copies at each call: one calls a function of the program between the
   sweeps (it could read the arrays), one may return from inside the loop. */
#include <stdio.h>
#define N 1003
static int steps;
static void tick(void) { steps++; }
void sweep_with_call(int tsteps, int n, double A[N], double B[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.5 * (A[i - 1] + A[i + 1]);
    tick();
    for (i = 1; i < n - 1; i++)
      A[i] = 0.5 * (B[i - 1] + B[i + 1]);
  }
#pragma endscop
}
int sweep_with_return(int tsteps, int n, double A[N], double B[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.5 * (A[i - 1] + A[i + 1]);
    if (t == 7) return t;
    for (i = 1; i < n - 1; i++)
      A[i] = 0.5 * (B[i - 1] + B[i + 1]);
  }
#pragma endscop
  return tsteps;
}
int main(void) {
  static double A[N], B[N];
  double s = 0;
  int r;
  for (int i = 0; i < N; i++) { A[i] = (i % 11) * 8.0; B[i] = 0; }
  sweep_with_call(10, N, A, B);
  r = sweep_with_return(10, N, A, B);
  for (int i = 0; i < N; i++) s += A[i] * (i % 7 + 1) + B[i];
  printf("%.6f %d %d\n", s, steps, r);
  return 0;
}
