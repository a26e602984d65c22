/* A row recurrence over every other column (half of a red-black sweep): each row is sequential,
   the rows are independent, so the row loop runs on the device around the strided loop as
   written. The input, a VLA parameter read transposed, is checked at the call not to overlap the output over a
   range whose length is the strided loop's trip count (an earlier version named the model's own
   parameter for it, the trip count, in that check: the OpenCL and CUDA outputs did not build; found by
   the fuzzer, tests/fuzz seed 91050 --target opencl --control 0.8). */
#include <stdio.h>
#define N 40
#define M 49
static double A[M][N], B[N][M];
static void kernel_half_sweep(int n, int m, double In[m][n], double a) {
  for (int i = 0; i < n; i++)
    for (int j = 2; j < m; j += 2)
      B[i][j] = a * B[i][j - 2] + In[j][i];
}
int main(void) {
  int i, j;
  for (i = 0; i < N; i++) for (j = 0; j < M; j++) { A[j][i] = (i * 7 + j * 3) % 11 / 11.0; B[i][j] = 0.25; }
  kernel_half_sweep(N, M, A, 0.5);
  for (i = 0; i < N; i++) for (j = 0; j < M; j++) printf("%.15g\n", B[i][j]);
  return 0;
}
