/* matvec.c (benchmark): w = M * v, single precision, I x K matrix. */
#include "bench_common.h"

#ifndef I
#define I 8192
#endif
#ifndef K
#define K 8192
#endif

static float M[I][K];
static float v[K];
static float w[I];

/* BENCH-KERNEL-BEGIN */
static void kernel(void)
{
    #pragma scop
    for (int i = 0; i < I; i++)
        for (int k = 0; k < K; k++)
            w[i] += M[i][k] * v[k];
    #pragma endscop
}
/* BENCH-KERNEL-END */

static void reset(void)
{
    for (int i = 0; i < I; i++)
        w[i] = 0.0f;
}

int main(void)
{
    for (int i = 0; i < I; i++)
        for (int k = 0; k < K; k++)
            M[i][k] = bench_next();
    for (int k = 0; k < K; k++)
        v[k] = bench_next();

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
    for (int i = 0; i < I; i++)
        { sum += w[i]; magnitude += bench_abs(w[i]); }
    bench_report(times, REPS, sum, magnitude);
    return 0;
}
