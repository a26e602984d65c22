/* A scalar declared in the body of the time loop, which the device computation writes (through
   its address: a band of one column leaves no reduction) and a host statement then reads: the
   region's checks before the loop cannot name it, so the loop keeps its per-call copies (an
   earlier version emitted an overlap check of 's' before the loop: the output did not build;
   found by the fuzzer, tests/fuzz seed 89086 with --control 0.8). */
#include <math.h>
#include <stdio.h>
#define T 12
#define W 1
static float A[T][W], M[W], R[T];
void kernel_running_max(int steps) {
  for (int t = 0; t < steps; t++) {
    float s = -1000.0f;
    for (int j = 0; j < W; j++) {
      M[j] = 0.5f * M[j] + A[t][j];
      s = fmaxf(s, A[t][j]);
    }
    R[t] = s;
  }
}
int main(void) {
  for (int t = 0; t < T; t++) A[t][0] = (float)(t % 9) - 4.0f;
  kernel_running_max(T);
  double h = M[0];
  for (int t = 0; t < T; t++) h += R[t] * (t % 7 + 1);
  printf("%.6f\n", h);
  return 0;
}
