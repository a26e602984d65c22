/* matvec.c: matrix-vector product w = M * v, annotated like the thesis's Listing 39.
 *
 * The `#pragma mdh` line names the output access and one combine operator per loop,
 * outermost first: `++` (concatenation) for i and `+` (reduction) for k.  As the thesis
 * requires, w starts at the neutral element of `+`, i.e. zero. */
#include <stdio.h>

#ifndef I
#define I 1000
#endif
#ifndef K
#define K 1200
#endif

static float M[I][K];
static float v[K];
static float w[I];

static unsigned lcg_state = 12345u;

/* Next pseudo-random value in [-1, 1), a multiple of 2^-15 (exact in float). */
static float next_value(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (float)((lcg_state >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

static void matvec(void)
{
#pragma mdh ( w[i] : ++ , + )
    for (int i = 0; i < I; ++i)
        for (int k = 0; k < K; ++k)
            w[i] += M[i][k] * v[k];
}

int main(void)
{
    for (int i = 0; i < I; ++i)
        for (int k = 0; k < K; ++k)
            M[i][k] = next_value();
    for (int k = 0; k < K; ++k)
        v[k] = next_value();
    for (int i = 0; i < I; ++i)
        w[i] = 0.0f;

    matvec();

#ifdef PRINT_CHECKSUM
    double sum = 0.0;
    for (int i = 0; i < I; ++i)
        sum += w[i];
    printf("%.9g\n", sum);
#else
    for (int i = 0; i < I; ++i)
        printf("%.9g\n", w[i]);
#endif
    return 0;
}
