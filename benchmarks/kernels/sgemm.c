/* sgemm.c (benchmark): C = A * B, single precision, M x K times K x N. */
#include "bench_common.h"

#ifndef M
#define M 1024
#endif
#ifndef N
#define N 1024
#endif
#ifndef K
#define K 1024
#endif

static float A[M][K];
static float B[K][N];
static float C[M][N];

/* BENCH-KERNEL-BEGIN */
static void kernel(void)
{
    #pragma scop
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            C[i][j] = 0.0f;
            for (int k = 0; k < K; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
    #pragma endscop
}
/* BENCH-KERNEL-END */

int main(void)
{
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            A[i][k] = bench_next();
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            B[k][j] = bench_next();

    double times[REPS];
    for (int rep = -1; rep < REPS; rep++) {
        double t0 = bench_now();
        kernel();
        double t1 = bench_now();
        if (rep >= 0)
            times[rep] = t1 - t0;
    }

    double sum = 0.0, magnitude = 0.0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            { sum += C[i][j]; magnitude += bench_abs(C[i][j]); }
    bench_report(times, REPS, sum, magnitude);
    return 0;
}
