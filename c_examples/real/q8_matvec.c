/* Int8 quantized matrix-vector products as in llama-style Q8_0 inference: the activation is
 * quantized per group of GS values (int8 codes and one float scale per group), each weight row
 * likewise; every group's dot product accumulates in int32, then is scaled by both group scales.
 * A feed-forward block (w1, w3 up, SiLU gate, w2 down) runs for a few tokens.
 *
 *   ./q8_matvec [scale] [tokens]      (default 1 4: dim 512, hidden 1376; the benchmark uses 4 128)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GS 32   /* quantization group size */

typedef struct {
    int8_t *q;  /* quantized values */
    float *s;   /* one scale per group */
} QuantizedTensor;

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

static void quantize(QuantizedTensor *qx, const float *x, int n)
{
    int num_groups = n / GS;
    const float Q_MAX = 127.0f;
    // BENCH-OMP: #pragma omp parallel for
    for (int group = 0; group < num_groups; group++) {
        float wmax = 0.0f;
        for (int i = 0; i < GS; i++) {
            float val = fabsf(x[group * GS + i]);
            if (val > wmax)
                wmax = val;
        }
        float scale = wmax / Q_MAX;
        qx->s[group] = scale;
        for (int i = 0; i < GS; i++) {
            float quant_value = scale > 0.0f ? x[group * GS + i] / scale : 0.0f;
            qx->q[group * GS + i] = (int8_t)roundf(quant_value);
        }
    }
}

/* W (d,n) @ x (n,) -> xout (d,), both quantized; idot keeps each row's raw int32 sum */
static void matmul_q8(float *xout, int32_t *idot, const QuantizedTensor *x, const QuantizedTensor *w,
                      int n, int d)
{
    int i;
    // BENCH-OMP: #pragma omp parallel for private(i)
    for (i = 0; i < d; i++) {
        float val = 0.0f;
        int32_t rowsum = 0;
        int in = i * n;
        for (int j = 0; j <= n - GS; j += GS) {
            int32_t ival = 0;
            for (int k = 0; k < GS; k++)
                ival += ((int32_t)x->q[j + k]) * ((int32_t)w->q[in + j + k]);
            val += ((float)ival) * w->s[(in + j) / GS] * x->s[j / GS];
            rowsum += ival;
        }
        xout[i] = val;
        idot[i] = rowsum;
    }
}

static void random_quantized(QuantizedTensor *t, long n, uint32_t *state)
{
    t->q = xmalloc((size_t)n);
    t->s = xmalloc((size_t)(n / GS) * sizeof(float));
    for (long i = 0; i < n; i++) {
        *state = *state * 1664525u + 1013904223u;
        t->q[i] = (int8_t)((int)((*state >> 16) % 255u) - 127);
    }
    for (long g = 0; g < n / GS; g++) {
        *state = *state * 1664525u + 1013904223u;
        t->s[g] = (1.0f + (float)((*state >> 16) % 1000u) / 1000.0f) * 1e-4f;
    }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int tokens = argc > 2 ? atoi(argv[2]) : 4;
    int dim, hidden;
    uint32_t state = 99u;
    QuantizedTensor w1, w2, w3, xq, hq;
    float *x, *h1, *h3, *out, *acc;
    int32_t *idot1, *idot3, *idot2;
    long long qsum = 0;
    double t0, t1;

    if (scale < 1 || tokens < 1) { fprintf(stderr, "usage: %s [scale>=1] [tokens>=1]\n", argv[0]); return 2; }
    dim = 512 * scale;
    hidden = 1376 * scale;           /* multiples of GS */
    random_quantized(&w1, (long)hidden * dim, &state);
    random_quantized(&w3, (long)hidden * dim, &state);
    random_quantized(&w2, (long)dim * hidden, &state);
    xq.q = xmalloc((size_t)dim);
    xq.s = xmalloc((size_t)(dim / GS) * sizeof(float));
    hq.q = xmalloc((size_t)hidden);
    hq.s = xmalloc((size_t)(hidden / GS) * sizeof(float));
    x = xmalloc((size_t)dim * sizeof(float));
    out = xmalloc((size_t)dim * sizeof(float));
    acc = xmalloc((size_t)dim * sizeof(float));
    h1 = xmalloc((size_t)hidden * sizeof(float));
    h3 = xmalloc((size_t)hidden * sizeof(float));
    idot1 = xmalloc((size_t)hidden * sizeof(int32_t));
    idot3 = xmalloc((size_t)hidden * sizeof(int32_t));
    idot2 = xmalloc((size_t)dim * sizeof(int32_t));
    for (int i = 0; i < dim; i++)
        acc[i] = 0.0f;

    t0 = now();
    for (int t = 0; t < tokens; t++) {
        for (int i = 0; i < dim; i++)      /* this token's activation */
            x[i] = sinf(0.37f * i + t) + 0.25f * cosf(1.3f * i - t);
        quantize(&xq, x, dim);
        matmul_q8(h1, idot1, &xq, &w1, dim, hidden);
        matmul_q8(h3, idot3, &xq, &w3, dim, hidden);
        for (int i = 0; i < hidden; i++) {
            float v = h1[i];
            h1[i] = v / (1.0f + expf(-v)) * h3[i];
        }
        quantize(&hq, h1, hidden);
        matmul_q8(out, idot2, &hq, &w2, hidden, dim);
        for (int i = 0; i < dim; i++)
            acc[i] += out[i];
        for (int i = 0; i < dim; i++)
            qsum += xq.q[i];
    }
    t1 = now();

    checksum("out", acc, dim);
    checksum("h1", h1, hidden);
    {
        long long a = 0, b = 0;
        double c = 0.0;   /* idot2 follows float results (h1's quantization): compared with a tolerance */
        for (int i = 0; i < hidden; i++) {
            a += (long long)idot1[i] * (i % 7 + 1);
            b += (long long)idot3[i] * (i % 7 + 1);
        }
        for (int i = 0; i < dim; i++)
            c += (double)idot2[i] * (i % 7 + 1);
        printf("ichecksum idot1 %lld\nichecksum idot3 %lld\n", a, b);
        printf("checksum idot2 %.10e %.10e %.10e\n", c, c, fabs(c));
    }
    printf("ichecksum xq %lld\n", qsum);
    printf("time_s %.6f\n", t1 - t0);
    free(w1.q); free(w1.s); free(w2.q); free(w2.s); free(w3.q); free(w3.s);
    free(xq.q); free(xq.s); free(hq.q); free(hq.s);
    free(x); free(out); free(acc); free(h1); free(h3); free(idot1); free(idot3); free(idot2);
    return 0;
}
