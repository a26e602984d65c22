/* The tail of a classifier over a batch, row by row on flat [b*cols + j] buffers: layer
 * normalization (mean, variance, affine), a GELU, a projection to the classes, a numerically
 * stable softmax and the mean cross-entropy loss against integer labels.
 *
 *   ./layernorm_softmax [scale]      (default 1: 256 rows x 256 features, 128 classes; benchmark 64)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int rows, cols, classes;
    float eps;
} Shape;

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

static void layernorm(const Shape *sh, float *out, const float *in, const float *gamma, const float *beta)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int b = 0; b < sh->rows; b++) {
        const float *x = in + b * sh->cols;
        float *y = out + b * sh->cols;
        float mean = 0.0f, var = 0.0f;
        for (int j = 0; j < sh->cols; j++)
            mean += x[j];
        mean /= sh->cols;
        for (int j = 0; j < sh->cols; j++) {
            float d = x[j] - mean;
            var += d * d;
        }
        var /= sh->cols;
        float rstd = 1.0f / sqrtf(var + sh->eps);
        for (int j = 0; j < sh->cols; j++)
            y[j] = (x[j] - mean) * rstd * gamma[j] + beta[j];
    }
}

static void gelu(float *x, long n)
{
    const float s = 0.7978845608f;   /* sqrt(2/pi) */
    // BENCH-OMP: #pragma omp parallel for
    for (long i = 0; i < n; i++) {
        float v = x[i];
        x[i] = 0.5f * v * (1.0f + tanhf(s * (v + 0.044715f * v * v * v)));
    }
}

static void project(const Shape *sh, float *logits, const float *h, const float *w, const float *bias)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int b = 0; b < sh->rows; b++)
        for (int c = 0; c < sh->classes; c++) {
            float acc = bias[c];
            for (int j = 0; j < sh->cols; j++)
                acc += h[b * sh->cols + j] * w[c * sh->cols + j];
            logits[b * sh->classes + c] = acc;
        }
}

static void softmax_rows(const Shape *sh, float *probs, const float *logits)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int b = 0; b < sh->rows; b++) {
        float maxv = -INFINITY, sum = 0.0f;
        for (int c = 0; c < sh->classes; c++)
            maxv = fmaxf(maxv, logits[b * sh->classes + c]);
        for (int c = 0; c < sh->classes; c++) {
            float e = expf(logits[b * sh->classes + c] - maxv);
            probs[b * sh->classes + c] = e;
            sum += e;
        }
        for (int c = 0; c < sh->classes; c++)
            probs[b * sh->classes + c] /= sum;
    }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    Shape sh;
    float *x, *h, *gamma, *beta, *w, *bias, *logits, *probs;
    int *target;
    uint32_t state = 5u;
    double loss = 0.0, t0, t1;

    if (scale < 1) { fprintf(stderr, "usage: %s [scale>=1]\n", argv[0]); return 2; }
    sh.rows = 256 * scale;
    sh.cols = 256;
    sh.classes = 128;
    sh.eps = 1e-5f;
    x = xmalloc((size_t)sh.rows * sh.cols * sizeof(float));
    h = xmalloc((size_t)sh.rows * sh.cols * sizeof(float));
    gamma = xmalloc((size_t)sh.cols * sizeof(float));
    beta = xmalloc((size_t)sh.cols * sizeof(float));
    w = xmalloc((size_t)sh.classes * sh.cols * sizeof(float));
    bias = xmalloc((size_t)sh.classes * sizeof(float));
    logits = xmalloc((size_t)sh.rows * sh.classes * sizeof(float));
    probs = xmalloc((size_t)sh.rows * sh.classes * sizeof(float));
    target = xmalloc((size_t)sh.rows * sizeof(int));
    for (long i = 0; i < (long)sh.rows * sh.cols; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = 3.0f * ((float)(state >> 8) / 16777216.0f) - 1.0f + (float)(i % 5);
    }
    for (int j = 0; j < sh.cols; j++) {
        gamma[j] = 1.0f + 0.01f * (j % 11);
        beta[j] = 0.02f * (j % 7) - 0.05f;
    }
    for (long i = 0; i < (long)sh.classes * sh.cols; i++) {
        state = state * 1664525u + 1013904223u;
        w[i] = ((float)(state >> 8) / 16777216.0f - 0.5f) * 0.2f;
    }
    for (int c = 0; c < sh.classes; c++)
        bias[c] = 0.01f * (c % 9);
    for (int b = 0; b < sh.rows; b++)
        target[b] = (b * 31 + 7) % sh.classes;

    t0 = now();
    layernorm(&sh, h, x, gamma, beta);
    gelu(h, (long)sh.rows * sh.cols);
    project(&sh, logits, h, w, bias);
    softmax_rows(&sh, probs, logits);
    for (int b = 0; b < sh.rows; b++)
        loss -= log((double)probs[b * sh.classes + target[b]]);
    loss /= sh.rows;
    t1 = now();

    checksum("h", h, (long)sh.rows * sh.cols);
    checksum("logits", logits, (long)sh.rows * sh.classes);
    checksum("probs", probs, (long)sh.rows * sh.classes);
    printf("checksum loss %.10e %.10e %.10e\n", loss, loss, fabs(loss));
    printf("time_s %.6f\n", t1 - t0);
    free(x); free(h); free(gamma); free(beta); free(w); free(bias); free(logits); free(probs); free(target);
    return 0;
}
