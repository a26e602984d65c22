/* One decoder-only transformer (llama-style) generating a sequence token by token with a
 * key/value cache: rmsnorm, matmul over flat row-major weights, rotary embeddings, per-head
 * attention through local pointers into the caches, softmax, SwiGLU feed-forward.
 *
 *   ./transformer [scale] [steps]      (default 1 32; the benchmark uses 4 96)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int dim;        /* model width */
    int hidden_dim; /* feed-forward width */
    int n_layers;
    int n_heads;
    int n_kv_heads; /* grouped-query attention: fewer key/value heads */
    int vocab_size;
    int seq_len;
} Config;

typedef struct {
    float *token_embedding; /* vocab_size x dim */
    float *rms_att;         /* n_layers x dim */
    float *rms_ffn;         /* n_layers x dim */
    float *wq;              /* n_layers x dim x dim */
    float *wk;              /* n_layers x kv_dim x dim */
    float *wv;              /* n_layers x kv_dim x dim */
    float *wo;              /* n_layers x dim x dim */
    float *w1;              /* n_layers x hidden_dim x dim */
    float *w2;              /* n_layers x dim x hidden_dim */
    float *w3;              /* n_layers x hidden_dim x dim */
    float *rms_final;       /* dim */
    float *wcls;            /* vocab_size x dim */
} Weights;

typedef struct {
    float *x, *xb, *xb2;    /* activations (dim) */
    float *hb, *hb2;        /* hidden_dim */
    float *q;               /* dim */
    float *k, *v;           /* point into the caches */
    float *att;             /* n_heads x seq_len */
    float *logits;          /* vocab_size */
    float *key_cache;       /* n_layers x seq_len x kv_dim */
    float *value_cache;
} RunState;

static uint32_t rng_state = 42u;

static float frand(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffffff) / 16777216.0f - 0.5f;
}

static float *alloc_random(size_t n, float scale)
{
    float *p = malloc(n * sizeof *p);
    size_t i;
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (i = 0; i < n; i++)
        p[i] = frand() * scale;
    return p;
}

static float *alloc_zero(size_t n)
{
    float *p = calloc(n, sizeof *p);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

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

static void rmsnorm(float *o, const float *x, const float *weight, int size)
{
    float ss = 0.0f;
    int j;
    for (j = 0; j < size; j++)
        ss += x[j] * x[j];
    ss /= size;
    ss += 1e-5f;
    ss = 1.0f / sqrtf(ss);
    for (j = 0; j < size; j++)
        o[j] = weight[j] * (ss * x[j]);
}

static void softmax(float *x, int size)
{
    float max_val = x[0], sum = 0.0f;
    int i;
    for (i = 1; i < size; i++)
        if (x[i] > max_val)
            max_val = x[i];
    for (i = 0; i < size; i++) {
        x[i] = expf(x[i] - max_val);
        sum += x[i];
    }
    for (i = 0; i < size; i++)
        x[i] /= sum;
}

/* W (d,n) @ x (n,) -> xout (d,) */
static void matmul(float *xout, const float *x, const float *w, int n, int d)
{
    int i;
#pragma omp parallel for private(i)
    for (i = 0; i < d; i++) {
        float val = 0.0f;
        for (int j = 0; j < n; j++)
            val += w[i * n + j] * x[j];
        xout[i] = val;
    }
}

static float *forward(const Config *p, const Weights *w, RunState *s, int token, int pos)
{
    float *x = s->x;
    int dim = p->dim;
    int kv_dim = (p->dim * p->n_kv_heads) / p->n_heads;
    int kv_mul = p->n_heads / p->n_kv_heads;
    int hidden_dim = p->hidden_dim;
    int head_size = dim / p->n_heads;
    int l, i, h;

    memcpy(x, w->token_embedding + (size_t)token * dim, dim * sizeof *x);

    for (l = 0; l < p->n_layers; l++) {
        int loff = l * p->seq_len * kv_dim;

        rmsnorm(s->xb, x, w->rms_att + l * dim, dim);
        s->k = s->key_cache + loff + pos * kv_dim;
        s->v = s->value_cache + loff + pos * kv_dim;
        matmul(s->q, s->xb, w->wq + (size_t)l * dim * dim, dim, dim);
        matmul(s->k, s->xb, w->wk + (size_t)l * dim * kv_dim, dim, kv_dim);
        matmul(s->v, s->xb, w->wv + (size_t)l * dim * kv_dim, dim, kv_dim);

        /* rotary position embedding of q and k */
        for (i = 0; i < dim; i += 2) {
            int head_dim = i % head_size;
            float freq = 1.0f / powf(10000.0f, head_dim / (float)head_size);
            float val = pos * freq;
            float fcr = cosf(val), fci = sinf(val);
            int rotn = i < kv_dim ? 2 : 1;
            for (int v = 0; v < rotn; v++) {
                float *vec = v == 0 ? s->q : s->k;
                float v0 = vec[i], v1 = vec[i + 1];
                vec[i] = v0 * fcr - v1 * fci;
                vec[i + 1] = v0 * fci + v1 * fcr;
            }
        }

        /* multi-head attention over the cached positions */
#pragma omp parallel for private(h)
        for (h = 0; h < p->n_heads; h++) {
            float *q = s->q + h * head_size;
            float *att = s->att + h * p->seq_len;
            float *xb = s->xb + h * head_size;
            int t, e;
            for (t = 0; t <= pos; t++) {
                float *k = s->key_cache + loff + t * kv_dim + (h / kv_mul) * head_size;
                float score = 0.0f;
                for (e = 0; e < head_size; e++)
                    score += q[e] * k[e];
                att[t] = score / sqrtf((float)head_size);
            }
            softmax(att, pos + 1);
            memset(xb, 0, head_size * sizeof(float));
            for (t = 0; t <= pos; t++) {
                float *v = s->value_cache + loff + t * kv_dim + (h / kv_mul) * head_size;
                float a = att[t];
                for (e = 0; e < head_size; e++)
                    xb[e] += a * v[e];
            }
        }

        /* output projection, written out as a flat three-index subscript */
        for (i = 0; i < dim; i++) {
            float val = 0.0f;
            for (int j = 0; j < dim; j++)
                val += w->wo[(l * dim + i) * dim + j] * s->xb[j];
            s->xb2[i] = val;
        }
        for (i = 0; i < dim; i++)
            x[i] += s->xb2[i];

        /* feed-forward: w2(silu(w1 x) * w3 x) */
        rmsnorm(s->xb, x, w->rms_ffn + l * dim, dim);
        matmul(s->hb, s->xb, w->w1 + (size_t)l * dim * hidden_dim, dim, hidden_dim);
        matmul(s->hb2, s->xb, w->w3 + (size_t)l * dim * hidden_dim, dim, hidden_dim);
        for (i = 0; i < hidden_dim; i++) {
            float val = s->hb[i];
            val *= 1.0f / (1.0f + expf(-val));
            val *= s->hb2[i];
            s->hb[i] = val;
        }
        matmul(s->xb, s->hb, w->w2 + (size_t)l * dim * hidden_dim, hidden_dim, dim);
        for (i = 0; i < dim; i++)
            x[i] += s->xb[i];
    }

    rmsnorm(x, x, w->rms_final, dim);
    matmul(s->logits, x, w->wcls, p->dim, p->vocab_size);
    return s->logits;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 32;
    Config c;
    Weights w;
    RunState s;
    int kv_dim, pos;
    double t0, t1, logit_sum = 0.0, logit_abs = 0.0;

    if (scale < 1 || steps < 1) { fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]); return 2; }
    c.dim = 128 * scale;
    c.hidden_dim = 344 * scale;
    c.n_layers = 4;
    c.n_heads = 8;
    c.n_kv_heads = 4;
    c.vocab_size = 512 * scale;
    c.seq_len = steps;
    kv_dim = c.dim * c.n_kv_heads / c.n_heads;

    w.token_embedding = alloc_random((size_t)c.vocab_size * c.dim, 1.0f);
    w.rms_att = alloc_random((size_t)c.n_layers * c.dim, 0.5f);
    w.rms_ffn = alloc_random((size_t)c.n_layers * c.dim, 0.5f);
    for (long i = 0; i < (long)c.n_layers * c.dim; i++) {
        w.rms_att[i] += 1.0f;
        w.rms_ffn[i] += 1.0f;
    }
    w.wq = alloc_random((size_t)c.n_layers * c.dim * c.dim, 2.0f / sqrtf((float)c.dim));
    w.wk = alloc_random((size_t)c.n_layers * kv_dim * c.dim, 2.0f / sqrtf((float)c.dim));
    w.wv = alloc_random((size_t)c.n_layers * kv_dim * c.dim, 2.0f / sqrtf((float)c.dim));
    w.wo = alloc_random((size_t)c.n_layers * c.dim * c.dim, 2.0f / sqrtf((float)c.dim));
    w.w1 = alloc_random((size_t)c.n_layers * c.hidden_dim * c.dim, 2.0f / sqrtf((float)c.dim));
    w.w2 = alloc_random((size_t)c.n_layers * c.dim * c.hidden_dim, 2.0f / sqrtf((float)c.hidden_dim));
    w.w3 = alloc_random((size_t)c.n_layers * c.hidden_dim * c.dim, 2.0f / sqrtf((float)c.dim));
    w.rms_final = alloc_random(c.dim, 0.5f);
    w.wcls = alloc_random((size_t)c.vocab_size * c.dim, 2.0f / sqrtf((float)c.dim));

    s.x = alloc_zero(c.dim);
    s.xb = alloc_zero(c.dim);
    s.xb2 = alloc_zero(c.dim);
    s.hb = alloc_zero(c.hidden_dim);
    s.hb2 = alloc_zero(c.hidden_dim);
    s.q = alloc_zero(c.dim);
    s.att = alloc_zero((size_t)c.n_heads * c.seq_len);
    s.logits = alloc_zero(c.vocab_size);
    s.key_cache = alloc_zero((size_t)c.n_layers * c.seq_len * kv_dim);
    s.value_cache = alloc_zero((size_t)c.n_layers * c.seq_len * kv_dim);

    t0 = now();
    for (pos = 0; pos < steps; pos++) {
        int token = (pos * 7 + 3) % c.vocab_size;   /* a fixed prompt instead of sampling */
        float *logits = forward(&c, &w, &s, token, pos);
        logit_sum += logits[pos % c.vocab_size];
        logit_abs += fabs(logits[pos % c.vocab_size]);
    }
    t1 = now();

    printf("checksum logits %.10e %.10e %.10e\n", logit_sum, logit_sum, logit_abs);
    checksum("last_logits", s.logits, c.vocab_size);
    checksum("key_cache", s.key_cache, (long)c.n_layers * c.seq_len * kv_dim);
    checksum("value_cache", s.value_cache, (long)c.n_layers * c.seq_len * kv_dim);
    checksum("x", s.x, c.dim);
    printf("time_s %.6f\n", t1 - t0);

    free(w.token_embedding); free(w.rms_att); free(w.rms_ffn); free(w.wq); free(w.wk); free(w.wv);
    free(w.wo); free(w.w1); free(w.w2); free(w.w3); free(w.rms_final); free(w.wcls);
    free(s.x); free(s.xb); free(s.xb2); free(s.hb); free(s.hb2); free(s.q); free(s.att);
    free(s.logits); free(s.key_cache); free(s.value_cache);
    return 0;
}
