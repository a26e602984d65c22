/* A struct accumulator declared in the body of the loop over rows, whose members a device
   computation sums into (passed as '&(acc.re)', a member the model names apart): the region's
   checks before the loop cannot name it, so the loop keeps its per-call copies (an earlier
   version emitted an overlap check of the model's name before the loop: the output did not
   build; found by the fuzzer, tests/fuzz seed 3180 --real-c 1.0 --target opencl). A second
   accumulator declared before the loop is named by its member's address. */
#include <stdio.h>
#define N 6
#define K 33
typedef struct { float re; float im; } cpx;
static float A[N * K + 2], B[N + 1], R[N + 1], S[N + 1];
void kernel_rows(void) {
  for (int i = 0; i < N; i++) {
    cpx acc = {0, 0};
    for (int k = 0; k < K; k++) {
      acc.re += A[i * K + k] - B[i];
      acc.im += B[i] * 2;
    }
    R[i + 1] = acc.re + 2 * acc.im;
  }
}
void kernel_total(void) {
  cpx tot = {0, 0};
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < K; k++) {
      tot.re += A[i * K + k];
      tot.im += B[i];
    }
    S[i] = tot.re - tot.im;
  }
}
int main(void) {
  for (int i = 0; i < N * K + 2; i++) A[i] = (float)(i % 9) - 4.0f;
  for (int i = 0; i < N + 1; i++) B[i] = (float)(i % 5) * 0.25f;
  kernel_rows();
  kernel_total();
  double h = 0;
  for (int i = 0; i < N + 1; i++) h += R[i] * (i % 7 + 1) + S[i] * (i % 3 + 1);
  printf("%.6f\n", h);
  return 0;
}
