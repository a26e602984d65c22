/* rmsnorm and axpy over a transformer's run state, as llama2.c-style programs write them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int dim;
    int hidden_dim;
    int n_layers;
    float eps;
} Config;

typedef struct {
    float *x;      /* activation */
    float *xb;     /* normalized activation */
    float *a;      /* residual branch */
    float *w;      /* rmsnorm weights */
} RunState;

struct scale { float alpha; int n; };

static void rmsnorm(RunState *s, const Config *p) {
    float ss = 0.0f;
    for (int j = 0; j < p->dim; j++)
        ss += s->x[j] * s->x[j];
    ss /= p->dim;
    ss += p->eps;
    ss = 1.0f / sqrtf(ss);
    for (int j = 0; j < p->dim; j++)
        s->xb[j] = s->w[j] * (ss * s->x[j]);
}

static void residual(RunState *s, const Config *p) {
    for (int l = 0; l < p->n_layers; l++)
        for (int i = 0; i < p->dim; i++)
            s->x[i] += s->a[i] * (float)(l + 1);
}

static void axpy(float *y, const float *x, struct scale c) {
    for (int i = 0; i < c.n; i++)
        y[i] += c.alpha * x[i];
}

int main(void) {
    Config cfg = {1000, 2000, 3, 1e-5f};
    RunState st;
    st.x = malloc(sizeof(float) * cfg.dim);
    st.xb = malloc(sizeof(float) * cfg.dim);
    st.a = malloc(sizeof(float) * cfg.dim);
    st.w = malloc(sizeof(float) * cfg.dim);
    for (int i = 0; i < cfg.dim; i++) {
        st.x[i] = (float)((i * 13) % 17) / 17.0f - 0.5f;
        st.a[i] = (float)((i * 7) % 11) / 11.0f;
        st.w[i] = 1.0f + (float)(i % 5) / 10.0f;
    }
    residual(&st, &cfg);
    rmsnorm(&st, &cfg);
    struct scale sc = {0.5f, cfg.dim};
    axpy(st.a, st.xb, sc);
    double sum = 0.0;
    for (int i = 0; i < cfg.dim; i++)
        sum += st.xb[i] * (1 + i % 3) + st.a[i] + st.x[i];
    printf("%.5f %.6f %.6f\n", sum, st.xb[17], st.a[999]);
    free(st.x); free(st.xb); free(st.a); free(st.w);
    return 0;
}
