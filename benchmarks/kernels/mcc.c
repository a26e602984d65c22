/* mcc.c (benchmark): multi-channel convolution, NHWC, stride 1, no padding.
 * MCC RW (ResNet-50 deep layer) and MCC PC (one-channel image) are size sets of this file. */
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

static float in[N][P + R - 1][Q + S - 1][C];
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
                                out[n][p][q][k] += in[n][p + r][q + s][c] * w[k][r][s][c];
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
        for (int h = 0; h < P + R - 1; h++)
            for (int x = 0; x < Q + S - 1; x++)
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
