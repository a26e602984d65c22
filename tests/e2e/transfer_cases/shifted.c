/* An output written whole when the run-time range [lo + 1, n) is the array's [0, N): the first call
   copies nothing in; the third (a part only) must copy y in to keep the rest; the second has
   aliased arguments (run as written). */
#include <stdio.h>
#define N 300
void shifted(int lo, int n, double x[N], double y[N]) {
  int i;
#pragma mdh(y[i + 1] : ++)
  for (i = lo; i < n - 1; i++)
    y[i + 1] = 2.0 * x[i + 1] + 1.0;
}
int main(void) {
  static double x[N], y[N];
  double s = 0;
  for (int i = 0; i < N; i++) { x[i] = i % 7; y[i] = 100 + i; }
  shifted(-1, N, x, y);
  for (int i = 0; i < N; i++) s += y[i] * (i % 3 + 1);
  shifted(3, N, x, x);
  shifted(5, N - 20, x, y);
  for (int i = 0; i < N; i++) s += y[i] * (i % 5 + 1);
  printf("%.1f\n", s);
  return 0;
}
