/* jacobi2d_time.c (benchmark): Jacobi 2-D over TSTEPS time steps (two sweeps per step, A -> B
 * -> A), the kernel as usually written (sizes as parameters, iterators at the top, #pragma scop).
 * One timed run per process (benchmarks/region.py interleaves the processes). */
#include "bench_common.h"

#ifndef N
#define N 1000
#endif
#ifndef TSTEPS
#define TSTEPS 100
#endif

static double A[N][N];
static double B[N][N];

/* BENCH-KERNEL-BEGIN */
void kernel_jacobi_2d(int tsteps, int n, double A[N][N], double B[N][N])
{
    int t, i, j;
#pragma scop
    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < n - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < n - 1; j++)
                A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
    }
#pragma endscop
}
/* BENCH-KERNEL-END */

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = bench_next();
            B[i][j] = 0.0;
        }
    double times[1];
    double t0 = bench_now();
    kernel_jacobi_2d(TSTEPS, N, A, B);
    times[0] = bench_now() - t0;
    double sum = 0.0, magnitude = 0.0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            sum += A[i][j];
            magnitude += bench_abs(A[i][j]);
        }
    bench_report(times, 1, sum, magnitude);
    return 0;
}
