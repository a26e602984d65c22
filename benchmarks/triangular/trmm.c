/* trmm.c (triangular benchmark): C = triu(A) * B, i.e. C[i][j] = sum_{k >= i} A[i][k] * B[k][j],
 * double precision, N x N. Row i sums N - i terms: a plain parallel for over i gives the first
 * thread most of the work. */
#include "bench_common.h"

#ifndef N
#define N 1200
#endif

static double A[N][N];
static double B[N][N];
static double C[N][N];

/* BENCH-KERNEL-BEGIN */
static void kernel(void)
{
    #pragma scop
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = i; k < N; k++)
                C[i][j] += A[i][k] * B[k][j];
    #pragma endscop
}
/* BENCH-KERNEL-END */

static void reset(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            C[i][j] = 0.0;
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++)
            { A[i][k] = bench_next(); B[i][k] = bench_next(); }

    double times[REPS];
    for (int rep = -1; rep < REPS; rep++) {
        reset();
        double t0 = bench_now();
        kernel();
        double t1 = bench_now();
        if (rep >= 0)
            times[rep] = t1 - t0;
    }

    double sum = 0.0, magnitude = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            { sum += C[i][j] * (1 + (i + j) % 3); magnitude += bench_abs(C[i][j]) * 3; }
    bench_report(times, REPS, sum, magnitude);
    return 0;
}
