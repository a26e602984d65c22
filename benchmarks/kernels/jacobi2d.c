/* jacobi2d.c (benchmark): one 5-point Jacobi step from A into B over the interior, N x M. */
#include "bench_common.h"

#ifndef N
#define N 4096
#endif
#ifndef M
#define M 4096
#endif

static float A[N][M];
static float B[N][M];

/* BENCH-KERNEL-BEGIN */
static void kernel(void)
{
    #pragma scop
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < M - 1; j++)
            B[i][j] = 0.2f * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
    #pragma endscop
}
/* BENCH-KERNEL-END */

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = bench_next();

    double times[REPS];
    for (int rep = -1; rep < REPS; rep++) {
        double t0 = bench_now();
        kernel();
        double t1 = bench_now();
        if (rep >= 0)
            times[rep] = t1 - t0;
    }

    double sum = 0.0, magnitude = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            { sum += B[i][j]; magnitude += bench_abs(B[i][j]); }
    bench_report(times, REPS, sum, magnitude);
    return 0;
}
