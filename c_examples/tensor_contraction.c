/* tensor_contraction.c: a TCCG-style contraction over two indices.
 *
 *   C[a][b][c] += A[a][d][e] * B[d][e][b][c]
 *
 * a, b, c are independent; d and e are reductions.  C starts at zero. */
#include <stdio.h>

#ifndef NA
#define NA 12
#endif
#ifndef NB
#define NB 10
#endif
#ifndef NC
#define NC 14
#endif
#ifndef ND
#define ND 8
#endif
#ifndef NE
#define NE 6
#endif

static float A[NA][ND][NE];
static float B[ND][NE][NB][NC];
static float C[NA][NB][NC];

static unsigned lcg_state = 555u;

/* Next pseudo-random value in [-1, 1), a multiple of 2^-15 (exact in float). */
static float next_value(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (float)((lcg_state >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

static void contract(void)
{
    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++)
            for (int c = 0; c < NC; c++)
                for (int d = 0; d < ND; d++)
                    for (int e = 0; e < NE; e++)
                        C[a][b][c] += A[a][d][e] * B[d][e][b][c];
}

int main(void)
{
    for (int a = 0; a < NA; a++)
        for (int d = 0; d < ND; d++)
            for (int e = 0; e < NE; e++)
                A[a][d][e] = next_value();
    for (int d = 0; d < ND; d++)
        for (int e = 0; e < NE; e++)
            for (int b = 0; b < NB; b++)
                for (int c = 0; c < NC; c++)
                    B[d][e][b][c] = next_value();
    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++)
            for (int c = 0; c < NC; c++)
                C[a][b][c] = 0.0f;

    contract();

#ifdef PRINT_CHECKSUM
    double sum = 0.0;
    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++)
            for (int c = 0; c < NC; c++)
                sum += C[a][b][c];
    printf("%.9g\n", sum);
#else
    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++)
            for (int c = 0; c < NC; c++)
                printf("%.9g\n", C[a][b][c]);
#endif
    return 0;
}
