/* The position of the largest value per time step (the first of equal values), then every value
   moved by it: an argmax reduction over (value, index) pairs inside a sequential loop. */
#include <stdio.h>
#ifndef N
#define N 20001
#endif
void kernel_argmax(int tsteps, int n, int a[N], int best[N], int at[N]) {
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    best[t] = -1;
    at[t] = -1;
    for (i = 0; i < n; i++)
      if (a[i] > best[t]) {
        best[t] = a[i];
        at[t] = i;
      }
    for (i = 0; i < n; i++)
      a[i] = (a[i] * 5 + at[t] + i) % 997;
  }
#pragma endscop
  printf("t=%d i=%d\n", t, i);
}
static int a[N], best[N], at[N];
int main(void) {
  long s = 0;
  int i;
  for (i = 0; i < N; i++)
    a[i] = (i * 31) % 991;
  kernel_argmax(9, N, a, best, at);
  for (i = 0; i < N; i++)
    s += (long) a[i] * (i % 5 + 1);
  printf("%ld %d %d %d %d\n", s, best[0], at[0], best[8], at[8]);
  return 0;
}
