/* C89 style: the block's locals declared at its top without values, each iterator reused by
 * several loops (llama2.c's attention heads: 'int t, e;' then a scores loop and a weighted-sum
 * loop over t, each with a loop over e inside). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void heads(int n_heads, int head_size, int seq_len, int pos, const float *q, const float *kc,
                  const float *vc, float *att, float *xb)
{
    int h;
    for (h = 0; h < n_heads; h++) {
        int t, e;
        const float *qh = q + h * head_size;
        float *ah = att + h * seq_len;
        float *xh = xb + h * head_size;
        for (t = 0; t <= pos; t++) {
            float score = 0.0f;
            for (e = 0; e < head_size; e++)
                score += qh[e] * kc[(t * n_heads + h) * head_size + e];
            ah[t] = score / sqrtf((float)head_size);
        }
        for (e = 0; e < head_size; e++)
            xh[e] = 0.0f;
        for (t = 0; t <= pos; t++) {
            float a = ah[t];
            for (e = 0; e < head_size; e++)
                xh[e] += a * vc[(t * n_heads + h) * head_size + e];
        }
    }
}

/* the iterator read after its loops: it keeps its declaration (and the loops their reason) */
static int last_index(int n, const float *x, float *y)
{
    int i, k;
    for (i = 0; i < n; i++)
        y[i] = 2.0f * x[i];
    k = i;
    return k;
}

int main(void)
{
    int n_heads = 4, head_size = 16, seq_len = 24, pos = 19;
    float *q = malloc(sizeof(float) * n_heads * head_size);
    float *kc = malloc(sizeof(float) * seq_len * n_heads * head_size);
    float *vc = malloc(sizeof(float) * seq_len * n_heads * head_size);
    float *att = calloc((size_t)n_heads * seq_len, sizeof(float));
    float *xb = calloc((size_t)n_heads * head_size, sizeof(float));
    float *y = calloc(64, sizeof(float));
    int i;
    for (i = 0; i < n_heads * head_size; i++)
        q[i] = (float)((i * 7) % 13) / 13.0f - 0.4f;
    for (i = 0; i < seq_len * n_heads * head_size; i++) {
        kc[i] = (float)((i * 11) % 17) / 17.0f - 0.5f;
        vc[i] = (float)((i * 5) % 19) / 19.0f - 0.3f;
    }
    heads(n_heads, head_size, seq_len, pos, q, kc, vc, att, xb);
    int k = last_index(64, q, y);
    double s = 0.0;
    for (i = 0; i < n_heads * head_size; i++)
        s += xb[i] * (1 + i % 7);
    for (i = 0; i < n_heads * seq_len; i++)
        s += att[i] * (1 + i % 5);
    printf("%.6f %d %.6f\n", s, k, y[63]);
    free(q); free(kc); free(vc); free(att); free(xb); free(y);
    return 0;
}
