/* dot.c (benchmark): double-precision dot product of two N-vectors into a scalar. */
#include "bench_common.h"

#ifndef N
#define N 16777216
#endif

static double x[N];
static double y[N];
static double result;

/* BENCH-KERNEL-BEGIN */
/* BENCH-OMP: parallel for reduction(+:s) -- a plain `parallel for` would race on s */
static void kernel(void)
{
    double s = 0.0;
    #pragma scop
    for (int i = 0; i < N; i++)
        s += x[i] * y[i];
    #pragma endscop
    result = s;
}
/* BENCH-KERNEL-END */

int main(void)
{
    for (int i = 0; i < N; i++) {
        x[i] = (double)bench_next();
        y[i] = (double)bench_next();
    }

    double times[REPS];
    for (int rep = -1; rep < REPS; rep++) {
        double t0 = bench_now();
        kernel();
        double t1 = bench_now();
        if (rep >= 0)
            times[rep] = t1 - t0;
    }

    bench_report(times, REPS, result, bench_abs(result));
    return 0;
}
