/* mcc.c: multi-channel convolution (the thesis's MCC, NHWC layout, stride 1, no padding).
 *
 *   out[n][p][q][k] += in[n][p+r][q+s][c] * w[k][r][s][c]
 *
 * over a 7-deep perfect nest n, p, q, k (independent) and r, s, c (reductions).
 * out starts at zero, the neutral element of `+`. */
#include <stdio.h>

#ifndef N
#define N 2
#endif
#ifndef P
#define P 8
#endif
#ifndef Q
#define Q 8
#endif
#ifndef K
#define K 16
#endif
#ifndef C
#define C 8
#endif
#ifndef R
#define R 3
#endif
#ifndef S
#define S 3
#endif

static float in[N][P + R - 1][Q + S - 1][C];
static float w[K][R][S][C];
static float out[N][P][Q][K];

static unsigned lcg_state = 7u;

/* Next pseudo-random value in [-1, 1), a multiple of 2^-15 (exact in float). */
static float next_value(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (float)((lcg_state >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

static void mcc(void)
{
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    for (int r = 0; r < R; r++)
                        for (int s = 0; s < S; s++)
                            for (int c = 0; c < C; c++)
                                out[n][p][q][k] += in[n][p + r][q + s][c] * w[k][r][s][c];
}

int main(void)
{
    for (int n = 0; n < N; n++)
        for (int h = 0; h < P + R - 1; h++)
            for (int x = 0; x < Q + S - 1; x++)
                for (int c = 0; c < C; c++)
                    in[n][h][x][c] = next_value();
    for (int k = 0; k < K; k++)
        for (int r = 0; r < R; r++)
            for (int s = 0; s < S; s++)
                for (int c = 0; c < C; c++)
                    w[k][r][s][c] = next_value();
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    out[n][p][q][k] = 0.0f;

    mcc();

#ifdef PRINT_CHECKSUM
    double sum = 0.0;
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    sum += out[n][p][q][k];
    printf("%.9g\n", sum);
#else
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    printf("%.9g\n", out[n][p][q][k]);
#endif
    return 0;
}
