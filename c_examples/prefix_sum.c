/* prefix_sum.c: inclusive prefix sum B[i] = B[i-1] + A[i].
 *
 * Every iteration reads the previous one's result (a flow dependence of distance 1),
 * so the loop must stay sequential: mdpoly has to leave this file unchanged.  The
 * input comes from an LCG, whose state is itself carried from one iteration to the
 * next, so there is no parallelizable nest anywhere in this program. */
#include <stdio.h>

#ifndef N
#define N 2000
#endif

static float A[N];
static float B[N];

static unsigned lcg_state = 31337u;

/* Next pseudo-random value in [-1, 1), a multiple of 2^-15 (exact in float). */
static float next_value(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (float)((lcg_state >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

static void prefix_sum(void)
{
    B[0] = A[0];
    for (int i = 1; i < N; i++)
        B[i] = B[i - 1] + A[i];
}

int main(void)
{
    for (int i = 0; i < N; i++)
        A[i] = next_value();

    prefix_sum();

#ifdef PRINT_CHECKSUM
    printf("%.9g\n", B[N - 1]);
#else
    for (int i = 0; i < N; i++)
        printf("%.9g\n", B[i]);
#endif
    return 0;
}
