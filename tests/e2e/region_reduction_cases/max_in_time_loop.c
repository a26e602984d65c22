/* A max-reduction per time step (the largest value of a), then every value updated with it. */
#include <stdio.h>
#ifndef N
#define N 20001
#endif
void kernel_maxstep(int tsteps, int n, int a[N], int mx[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    mx[t] = -1;
    for (i = 0; i < n; i++)
      mx[t] = mx[t] > a[i] ? mx[t] : a[i];
    for (i = 0; i < n; i++)
      a[i] = (a[i] * 7 + mx[t] + i) % 1009;
  }
#pragma endscop
  printf("t=%d i=%d\n", t, i);
}
static int a[N], mx[N];
int main(void) {
  long s = 0;
  int i;
  for (i = 0; i < N; i++)
    a[i] = (i * 37) % 1001;
  kernel_maxstep(9, N, a, mx);
  for (i = 0; i < N; i++)
    s += (long) a[i] * (i % 5 + 1);
  printf("%ld %d %d %d\n", s, mx[0], mx[4], mx[8]);
  return 0;
}
