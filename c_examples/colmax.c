/* colmax.c: column maxima m[j] = max_i A[i][j], a max-reduction over i.
 *
 * m starts at -INFINITY, the neutral element of max, before the nest. */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N 500
#endif
#ifndef M
#define M 700
#endif

static float A[N][M];
static float m[M];

static unsigned lcg_state = 4242u;

/* Next pseudo-random value in [-1, 1), a multiple of 2^-15 (exact in float). */
static float next_value(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (float)((lcg_state >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

static void colmax(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            m[j] = fmaxf(m[j], A[i][j]);
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = next_value() * 100.0f;
    for (int j = 0; j < M; j++)
        m[j] = -INFINITY;

    colmax();

#ifdef PRINT_CHECKSUM
    double sum = 0.0;
    for (int j = 0; j < M; j++)
        sum += m[j];
    printf("%.9g\n", sum);
#else
    for (int j = 0; j < M; j++)
        printf("%.9g\n", m[j]);
#endif
    return 0;
}
