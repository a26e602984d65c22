/* chol_update.c (triangular benchmark): the Cholesky-style inner product of a factorisation step,
 * S[i][j] = A[i][j] - sum_{k < j} L[i][k] * L[j][k] for j <= i (a tetrahedral domain),
 * double precision, N x N. Row i does about i^2 / 2 multiply-adds: a plain parallel for over i
 * gives the last thread 7/8 of the work on two threads. */
#include "bench_common.h"

#ifndef N
#define N 1400
#endif

static double A[N][N];
static double L[N][N];
static double S[N][N];

/* BENCH-KERNEL-BEGIN */
static void kernel(void)
{
    #pragma scop
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            S[i][j] = A[i][j];
            for (int k = 0; k < j; k++)
                S[i][j] -= L[i][k] * L[j][k];
        }
    #pragma endscop
}
/* BENCH-KERNEL-END */

static void reset(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            S[i][j] = 0.0;
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++)
            { A[i][k] = bench_next(); L[i][k] = bench_next(); }

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
            { sum += S[i][j] * (1 + (i + j) % 3); magnitude += bench_abs(S[i][j]) * 3; }
    bench_report(times, REPS, sum, magnitude);
    return 0;
}
