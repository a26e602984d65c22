/* mcc_strided.c (benchmark): multi-channel convolution, NHWC input, KRSC weights, stride STR
 * in both spatial dims, padding VALID: out[n][p][q][k] = sum_{r,s,c} in[n][p*STR+r][q*STR+s][c] * w[k][r][s][c].
 * The input is IH x IW (default the rows and columns the output reads, (P-1)*STR+R x (Q-1)*STR+S);
 * a larger one (ResNet-50's 230 x 230 for a 112 x 112 output of a 7 x 7 stride-2 filter) has
 * rows and columns that VALID padding never reads, as in the vendor call. */
#include "bench_common.h"

#ifndef N
#define N 1
#endif
#ifndef P
#define P 7
#endif
#ifndef Q
#define Q 7
#endif
#ifndef K
#define K 512
#endif
#ifndef C
#define C 512
#endif
#ifndef R
#define R 3
#endif
#ifndef S
#define S 3
#endif
#ifndef STR
#define STR 1
#endif
#ifndef IH
#define IH ((P - 1) * STR + R)
#endif
#ifndef IW
#define IW ((Q - 1) * STR + S)
#endif

static float in[N][IH][IW][C];
static float w[K][R][S][C];
static float out[N][P][Q][K];

/* BENCH-KERNEL-BEGIN */
static void kernel(void)
{
    #pragma scop
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    for (int r = 0; r < R; r++)
                        for (int s = 0; s < S; s++)
                            for (int c = 0; c < C; c++)
                                out[n][p][q][k] += in[n][p * STR + r][q * STR + s][c] * w[k][r][s][c];
    #pragma endscop
}
/* BENCH-KERNEL-END */

static void reset(void)
{
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    out[n][p][q][k] = 0.0f;
}

int main(void)
{
    for (int n = 0; n < N; n++)
        for (int h = 0; h < IH; h++)
            for (int x = 0; x < IW; x++)
                for (int c = 0; c < C; c++)
                    in[n][h][x][c] = bench_next();
    for (int k = 0; k < K; k++)
        for (int r = 0; r < R; r++)
            for (int s = 0; s < S; s++)
                for (int c = 0; c < C; c++)
                    w[k][r][s][c] = bench_next();

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
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    { sum += out[n][p][q][k]; magnitude += bench_abs(out[n][p][q][k]); }
    bench_report(times, REPS, sum, magnitude);
    return 0;
}
