/* bench_common.h: timing and input helpers shared by the benchmark kernels.
 *
 * Each kernel program runs its kernel once to warm up, then REPS timed times (only the
 * kernel call is inside the timer), and prints
 *     median_s <median seconds>
 *     checksum <sum of the outputs>
 *     magnitude <sum of the outputs' absolute values>
 * which benchmarks/run.py parses. The magnitude scales the tolerance of the checksum comparison:
 * a float reduction that reassociates changes each output by rounding errors proportional to
 * the values summed, and the checksum's own cancellation must not magnify that. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef REPS
#define REPS 5
#endif

static double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench_report(double *times, int n, double checksum, double magnitude)
{
    qsort(times, (size_t)n, sizeof times[0], bench_cmp);
    printf("median_s %.9g\n", times[n / 2]);
    printf("checksum %.17g\n", checksum);
    printf("magnitude %.17g\n", magnitude);
}

/* Absolute value without libm. */
static double bench_abs(double x)
{
    return x < 0 ? -x : x;
}

static unsigned bench_lcg_state = 12345u;

/* Next pseudo-random value in [-1, 1). */
static float bench_next(void)
{
    bench_lcg_state = bench_lcg_state * 1103515245u + 12345u;
    return (float)((bench_lcg_state >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

#endif
