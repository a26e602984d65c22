/* Multi-head attention scores as llama2.c writes them: per-head pointers into flat buffers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int dim;
    int n_heads;
    int n_kv_heads;
    int seq_len;
} Config;

typedef struct {
    float *q;
    float *att;
    float *key_cache;
} RunState;

static void attention(RunState *s, const Config *p, int l, int pos) {
    int head_size = p->dim / p->n_heads;
    int kv_dim = p->dim;
    int loff = l * p->seq_len * kv_dim;
    for (int h = 0; h < p->n_heads; h++) {
        float *q = s->q + h * head_size;
        float *att = s->att + h * p->seq_len;
        for (int t = 0; t <= pos; t++) {
            float *k = s->key_cache + loff + t * kv_dim + h * head_size;
            float score = 0.0f;
            for (int i = 0; i < head_size; i++)
                score += q[i] * k[i];
            att[t] = score / sqrtf(head_size);
        }
    }
}

/* The same heads, each head's query scaled in place through a row pointer. */
static void scale_heads(RunState *s, const Config *p) {
    int head_size = p->dim / p->n_heads;
    for (int h = 0; h < p->n_heads; h++) {
        float *q = s->q + h * head_size;
        for (int i = 0; i < head_size; i++)
            q[i] = q[i] * 0.5f + (float)h;
    }
}

int main(void) {
    Config p = {64, 4, 4, 32};
    RunState s;
    int layers = 2;
    s.q = malloc(sizeof(float) * p.dim);
    s.att = malloc(sizeof(float) * p.n_heads * p.seq_len);
    s.key_cache = malloc(sizeof(float) * layers * p.seq_len * p.dim);
    for (int i = 0; i < p.dim; i++) s.q[i] = (float)((i * 7) % 13) / 13.0f - 0.4f;
    for (int i = 0; i < layers * p.seq_len * p.dim; i++) s.key_cache[i] = (float)((i * 11) % 17) / 17.0f - 0.5f;
    for (int i = 0; i < p.n_heads * p.seq_len; i++) s.att[i] = 0.0f;
    scale_heads(&s, &p);
    attention(&s, &p, 1, 20);
    double sum = 0.0;
    for (int i = 0; i < p.n_heads * p.seq_len; i++) sum += s.att[i] * (1 + i % 7);
    printf("%.6f %.6f %.6f\n", sum, s.att[3], s.att[p.seq_len + 5]);
    free(s.q); free(s.att); free(s.key_cache);
    return 0;
}
