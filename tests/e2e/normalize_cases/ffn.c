/* A transformer block's feed-forward part, llama2.c style: weights and activations behind
   typedef'd struct pointers, a nested config struct, per-row weight pointers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { int dim; int hidden_dim; } Shape;
typedef struct { Shape shape; int n_layers; } Config;
typedef struct weights { float *w1; float *w2; float *rms; } Weights;
typedef struct { float *x; float *xb; float *hb; float *hb2; } RunState;
typedef Weights *WeightsPtr;

static void swiglu(RunState *s, const Config *p) {
    for (int i = 0; i < p->shape.hidden_dim; i++) {
        float val = s->hb[i];
        val *= (1.0f / (1.0f + expf(-val)));
        val *= s->hb2[i];
        s->hb[i] = val;
    }
}

static void up(RunState *s, WeightsPtr w, const Config *p) {
    int dim = p->shape.dim, hidden = p->shape.hidden_dim;
    for (int i = 0; i < hidden; i++) {
        const float *row = w->w1 + i * dim;
        float val = 0.0f;
        for (int j = 0; j < dim; j++)
            val += row[j] * s->x[j];
        s->hb[i] = val;
        s->hb2[i] = 0.5f * val;
    }
}

static void residual(RunState *s, const Config *p) {
    float *x = s->x;
    for (int i = 0; i < p->shape.dim; i++)
        x[i] += s->xb[i] * s->hb[i];
}

int main(void) {
    Config p = {{48, 96}, 2};
    Weights w;
    RunState s;
    w.w1 = malloc(sizeof(float) * p.n_layers * p.shape.dim * p.shape.hidden_dim);
    s.x = malloc(sizeof(float) * p.shape.dim);
    s.xb = malloc(sizeof(float) * p.shape.dim);
    s.hb = malloc(sizeof(float) * p.shape.hidden_dim);
    s.hb2 = malloc(sizeof(float) * p.shape.hidden_dim);
    for (int i = 0; i < p.n_layers * p.shape.dim * p.shape.hidden_dim; i++) w.w1[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int i = 0; i < p.shape.dim; i++) s.x[i] = (float)(i % 5) / 5.0f, s.xb[i] = (float)(i % 3);
    for (int l = 0; l < p.n_layers; l++) {
        up(&s, &w, &p);
        w.w1 += p.shape.dim * p.shape.hidden_dim;
        swiglu(&s, &p);
        residual(&s, &p);
    }
    double sum = 0.0;
    for (int i = 0; i < p.shape.dim; i++) sum += s.x[i] * (1 + i % 4);
    printf("%.5f %.6f %.6f\n", sum, s.x[3], s.hb[17]);
    free(w.w1 - p.n_layers * p.shape.dim * p.shape.hidden_dim); free(s.x); free(s.xb); free(s.hb); free(s.hb2);
    return 0;
}
