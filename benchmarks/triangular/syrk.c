/* syrk.c (triangular benchmark): C += alpha * A * A^T on the lower triangle of C (polybench's
 * loop order i, k, j <= i), double precision, N x M input. Row i updates i + 1 elements: a
 * plain parallel for over i gives the last thread most of the work. */
#include "bench_common.h"

#ifndef N
#define N 1200
#endif
#ifndef M
#define M 1000
#endif

static double A[N][M];
static double C[N][N];

/* BENCH-KERNEL-BEGIN */
static void kernel(double alpha)
{
    #pragma scop
    for (int i = 0; i < N; i++)
        for (int k = 0; k < M; k++)
            for (int j = 0; j <= i; j++)
                C[i][j] += alpha * A[i][k] * A[j][k];
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
        for (int k = 0; k < M; k++)
            A[i][k] = bench_next();

    double times[REPS];
    for (int rep = -1; rep < REPS; rep++) {
        reset();
        double t0 = bench_now();
        kernel(1.5);
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
