/* A convolution layer as inference code writes it: NHWC activations and KRSC filters in flat
 * buffers, stride 1 with zero padding handled by bounds tests, bias and ReLU fused, then a 2x2
 * max-pool and a global average pool per channel.
 *
 *   ./conv2d_nhwc [scale]      (default 1: 2x32x32x32 -> 32 filters 3x3; benchmark 6)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int N, H, W, C;     /* input */
    int K, R, S;        /* filters */
    int pad;
} ConvShape;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void checksum(const char *name, const float *x, long n)
{
    double s = 0.0, w = 0.0, a = 0.0;
    long i;
    for (i = 0; i < n; i++) {
        s += x[i];
        w += x[i] * (double)(i % 13 + 1);
        a += fabs(x[i]);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

static void conv_relu(const ConvShape *cs, float *out, const float *in, const float *filt, const float *bias)
{
    int N = cs->N, H = cs->H, W = cs->W, C = cs->C, K = cs->K, R = cs->R, S = cs->S, pad = cs->pad;
    int OH = H + 2 * pad - R + 1, OW = W + 2 * pad - S + 1;
    int n, oy, ox, k, r, s, c;
    // BENCH-OMP: #pragma omp parallel for collapse(2) private(ox, k, r, s, c)
    for (n = 0; n < N; n++)
        for (oy = 0; oy < OH; oy++)
            for (ox = 0; ox < OW; ox++)
                for (k = 0; k < K; k++) {
                    float acc = bias[k];
                    for (r = 0; r < R; r++)
                        for (s = 0; s < S; s++) {
                            int iy = oy + r - pad, ix = ox + s - pad;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                for (c = 0; c < C; c++)
                                    acc += in[((n * H + iy) * W + ix) * C + c] * filt[((k * R + r) * S + s) * C + c];
                        }
                    out[((n * OH + oy) * OW + ox) * K + k] = acc > 0.0f ? acc : 0.0f;
                }
}

static void maxpool2(float *out, const float *in, int N, int H, int W, int C)
{
    int OH = H / 2, OW = W / 2;
    // BENCH-OMP: #pragma omp parallel for
    for (int n = 0; n < N; n++)
        for (int y = 0; y < OH; y++)
            for (int x = 0; x < OW; x++)
                for (int c = 0; c < C; c++) {
                    float m = in[((n * H + 2 * y) * W + 2 * x) * C + c];
                    m = fmaxf(m, in[((n * H + 2 * y) * W + 2 * x + 1) * C + c]);
                    m = fmaxf(m, in[((n * H + 2 * y + 1) * W + 2 * x) * C + c]);
                    m = fmaxf(m, in[((n * H + 2 * y + 1) * W + 2 * x + 1) * C + c]);
                    out[((n * OH + y) * OW + x) * C + c] = m;
                }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    ConvShape cs;
    float *in, *filt, *bias, *act, *pooled, *gap;
    uint32_t state = 77u;
    int OH, OW;
    double t0, t1;

    if (scale < 1) { fprintf(stderr, "usage: %s [scale>=1]\n", argv[0]); return 2; }
    cs.N = 2;
    cs.H = 32 * scale;
    cs.W = 32 * scale;
    cs.C = 32;
    cs.K = 32;
    cs.R = 3;
    cs.S = 3;
    cs.pad = 1;
    OH = cs.H + 2 * cs.pad - cs.R + 1;
    OW = cs.W + 2 * cs.pad - cs.S + 1;
    in = xmalloc((size_t)cs.N * cs.H * cs.W * cs.C * sizeof(float));
    filt = xmalloc((size_t)cs.K * cs.R * cs.S * cs.C * sizeof(float));
    bias = xmalloc((size_t)cs.K * sizeof(float));
    act = xmalloc((size_t)cs.N * OH * OW * cs.K * sizeof(float));
    pooled = xmalloc((size_t)cs.N * (OH / 2) * (OW / 2) * cs.K * sizeof(float));
    gap = xmalloc((size_t)cs.N * cs.K * sizeof(float));
    for (long i = 0; i < (long)cs.N * cs.H * cs.W * cs.C; i++) {
        state = state * 1664525u + 1013904223u;
        in[i] = (float)(state >> 8) / 16777216.0f;
    }
    for (long i = 0; i < (long)cs.K * cs.R * cs.S * cs.C; i++) {
        state = state * 1664525u + 1013904223u;
        filt[i] = ((float)(state >> 8) / 16777216.0f - 0.5f) * 0.2f;
    }
    for (int k = 0; k < cs.K; k++)
        bias[k] = 0.01f * (k % 5) - 0.02f;

    t0 = now();
    conv_relu(&cs, act, in, filt, bias);
    maxpool2(pooled, act, cs.N, OH, OW, cs.K);
    for (int n = 0; n < cs.N; n++)
        for (int k = 0; k < cs.K; k++) {
            float sum = 0.0f;
            for (int p = 0; p < (OH / 2) * (OW / 2); p++)
                sum += pooled[(n * (OH / 2) * (OW / 2) + p) * cs.K + k];
            gap[n * cs.K + k] = sum / ((OH / 2) * (OW / 2));
        }
    t1 = now();

    checksum("act", act, (long)cs.N * OH * OW * cs.K);
    checksum("pooled", pooled, (long)cs.N * (OH / 2) * (OW / 2) * cs.K);
    checksum("gap", gap, (long)cs.N * cs.K);
    printf("time_s %.6f\n", t1 - t0);
    free(in); free(filt); free(bias); free(act); free(pooled); free(gap);
    return 0;
}
