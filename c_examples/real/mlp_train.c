/* A two-layer perceptron trained by mini-batch SGD, written the way llm.c writes its layers: flat
 * float arrays with run-time sizes, weights stored [out][in], an optional bias (NULL for the
 * second layer), forward and backward matmuls (out = inp W^T + b; dinp += dout W; dW += dout^T inp;
 * db += column sums of dout), ReLU, a fused softmax cross-entropy per row, per-row argmax for the
 * accuracy, and the SGD step over the parameters.
 *
 *   ./mlp_train [scale] [steps]   (default 1 3: batch 64, 196 inputs, 256 hidden units, 10 classes;
 *                                  the benchmark uses 4 6: batch 256, 784 inputs, 1024 hidden)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int in, hidden, classes;
    float *w1, *b1, *w2;        /* w1: hidden x in, w2: classes x hidden (no bias) */
    float *dw1, *db1, *dw2;
} Model;

typedef struct {
    float *h, *act, *logits, *probs;      /* forward activations */
    float *dlogits, *dact, *dh;           /* their gradients */
} Buffers;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *alloc_floats(size_t n)
{
    float *p = calloc(n, sizeof(float));
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static unsigned next_random(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static float uniform(unsigned *state)
{
    return (float)next_random(state) / 16777216.0f;
}

/* out[b][o] = bias[o] + sum_i inp[b][i] * weight[o][i] */
static void matmul_forward(float *out, const float *inp, const float *weight, const float *bias,
                           int B, int C, int OC)
{
    for (int b = 0; b < B; b++) {
        for (int o = 0; o < OC; o++) {
            float val = (bias != NULL) ? bias[o] : 0.0f;
            for (int i = 0; i < C; i++)
                val += inp[b * C + i] * weight[o * C + i];
            out[b * OC + o] = val;
        }
    }
}

/* dinp += dout W, dweight += dout^T inp, dbias += column sums of dout */
static void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                            const float *inp, const float *weight, int B, int C, int OC)
{
    if (dinp != NULL) {
        for (int b = 0; b < B; b++) {
            const float *dout_b = dout + b * OC;
            float *dinp_b = dinp + b * C;
            for (int o = 0; o < OC; o++) {
                float d = dout_b[o];
                const float *wrow = weight + o * C;
                for (int i = 0; i < C; i++)
                    dinp_b[i] += wrow[i] * d;
            }
        }
    }
    for (int o = 0; o < OC; o++) {
        float *dwrow = dweight + o * C;
        for (int b = 0; b < B; b++) {
            float d = dout[b * OC + o];
            const float *inp_b = inp + b * C;
            for (int i = 0; i < C; i++)
                dwrow[i] += inp_b[i] * d;
        }
    }
    if (dbias != NULL) {
        for (int o = 0; o < OC; o++) {
            float sum = 0.0f;
            for (int b = 0; b < B; b++)
                sum += dout[b * OC + o];
            dbias[o] += sum;
        }
    }
}

static void relu_forward(float *out, const float *inp, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

static void relu_backward(float *dinp, const float *inp, const float *dout, int n)
{
    for (int i = 0; i < n; i++)
        dinp[i] = inp[i] > 0.0f ? dout[i] : 0.0f;
}

/* softmax of each row, the mean cross-entropy loss, and its gradient dlogits = (probs - onehot) / B */
static float softmax_crossentropy(float *probs, float *dlogits, const float *logits, const int *labels,
                                  int B, int V)
{
    float loss = 0.0f;
    for (int b = 0; b < B; b++) {
        const float *row = logits + b * V;
        float *p = probs + b * V;
        float maxval = -INFINITY;
        for (int v = 0; v < V; v++)
            if (row[v] > maxval)
                maxval = row[v];
        float sum = 0.0f;
        for (int v = 0; v < V; v++) {
            p[v] = expf(row[v] - maxval);
            sum += p[v];
        }
        for (int v = 0; v < V; v++)
            p[v] /= sum;
        loss -= logf(p[labels[b]]);
    }
    for (int b = 0; b < B; b++)
        for (int v = 0; v < V; v++)
            dlogits[b * V + v] = (probs[b * V + v] - (v == labels[b] ? 1.0f : 0.0f)) / (float)B;
    return loss / (float)B;
}

static int correct_predictions(const float *probs, const int *labels, int B, int V, int *pred)
{
    for (int b = 0; b < B; b++) {
        int best = 0;
        for (int v = 1; v < V; v++)
            if (probs[b * V + v] > probs[b * V + best])
                best = v;
        pred[b] = best;
    }
    int correct = 0;
    for (int b = 0; b < B; b++)
        correct += pred[b] == labels[b];
    return correct;
}

static void sgd_step(float *param, float *grad, size_t n, float lr)
{
    for (size_t i = 0; i < n; i++) {
        param[i] -= lr * grad[i];
        grad[i] = 0.0f;
    }
}

static void checksum(const char *name, const float *x, long n)
{
    double s = 0.0, w = 0.0, a = 0.0;
    for (long i = 0; i < n; i++) {
        s += x[i];
        w += x[i] * (double)(i % 13 + 1);
        a += fabs(x[i]);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 3;
    if (scale < 1 || steps < 1) {
        fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]);
        return 2;
    }
    int B = 64 * scale, IN = 196 * scale, H = 256 * scale, V = 10;
    Model m = {IN, H, V, NULL, NULL, NULL, NULL, NULL, NULL};
    Buffers s;
    unsigned state = 2024u;

    m.w1 = alloc_floats((size_t)H * IN);
    m.b1 = alloc_floats((size_t)H);
    m.w2 = alloc_floats((size_t)V * H);
    m.dw1 = alloc_floats((size_t)H * IN);
    m.db1 = alloc_floats((size_t)H);
    m.dw2 = alloc_floats((size_t)V * H);
    float scale1 = 1.0f / sqrtf((float)IN), scale2 = 1.0f / sqrtf((float)H);
    for (long i = 0; i < (long)H * IN; i++)
        m.w1[i] = (2.0f * uniform(&state) - 1.0f) * scale1;
    for (long i = 0; i < (long)V * H; i++)
        m.w2[i] = (2.0f * uniform(&state) - 1.0f) * scale2;

    float *x = alloc_floats((size_t)B * IN);
    int *labels = malloc(sizeof(int) * B), *pred = malloc(sizeof(int) * B);
    s.h = alloc_floats((size_t)B * H);
    s.act = alloc_floats((size_t)B * H);
    s.logits = alloc_floats((size_t)B * V);
    s.probs = alloc_floats((size_t)B * V);
    s.dlogits = alloc_floats((size_t)B * V);
    s.dact = alloc_floats((size_t)B * H);
    s.dh = alloc_floats((size_t)B * H);
    for (int b = 0; b < B; b++) {                 /* inputs with a class-dependent bump */
        labels[b] = (int)(next_random(&state) % (unsigned)V);
        for (int i = 0; i < IN; i++)
            x[b * IN + i] = uniform(&state) + (i % V == labels[b] ? 0.5f : 0.0f);
    }

    float loss = 0.0f, first_loss = 0.0f;
    int correct = 0;
    double t0 = now();
    for (int step = 0; step < steps; step++) {
        matmul_forward(s.h, x, m.w1, m.b1, B, IN, H);
        relu_forward(s.act, s.h, B * H);
        matmul_forward(s.logits, s.act, m.w2, NULL, B, H, V);
        loss = softmax_crossentropy(s.probs, s.dlogits, s.logits, labels, B, V);
        if (step == 0)
            first_loss = loss;
        correct = correct_predictions(s.probs, labels, B, V, pred);
        memset(s.dact, 0, sizeof(float) * (size_t)B * H);
        matmul_backward(s.dact, m.dw2, NULL, s.dlogits, s.act, m.w2, B, H, V);
        relu_backward(s.dh, s.h, s.dact, B * H);
        matmul_backward(NULL, m.dw1, m.db1, s.dh, x, m.w1, B, IN, H);
        sgd_step(m.w1, m.dw1, (size_t)H * IN, 0.05f);
        sgd_step(m.b1, m.db1, (size_t)H, 0.05f);
        sgd_step(m.w2, m.dw2, (size_t)V * H, 0.05f);
    }
    double t1 = now();

    printf("checksum loss %.10e %.10e %.10e\n", (double)loss, (double)first_loss, fabs((double)loss));
    printf("ichecksum correct %d\n", correct);
    checksum("w1", m.w1, (long)H * IN);
    checksum("b1", m.b1, H);
    checksum("w2", m.w2, (long)V * H);
    checksum("probs", s.probs, (long)B * V);
    printf("time_s %.6f\n", t1 - t0);
    free(m.w1); free(m.b1); free(m.w2); free(m.dw1); free(m.db1); free(m.dw2);
    free(x); free(labels); free(pred);
    free(s.h); free(s.act); free(s.logits); free(s.probs); free(s.dlogits); free(s.dact); free(s.dh);
    return 0;
}
