/* Forms the normalization passes must leave as written, each with its located reason. */
#include <stdio.h>

typedef struct { int n; float sum; float *v; } Acc;
struct cell { float prob; int index; };

static void total(Acc *a) {
    for (int i = 0; i < a->n; i++)
        a->sum += *(a->v++);
}

static void walk(float *base) {
    for (int h = 0; h < 8; h++) {
        float *q = base + h * 16;
        for (int i = 0; i < 16; i++) {
            *q = *q * 2.0f + (float)i;
            q += i;
        }
    }
}

static int last_index(float *a) {
    int c = 0;
    for (int i = 0; i < 100; i++) {
        c = 2 * i + 1;
        a[c] = (float)i;
    }
    return c;
}

static void probs(const struct cell *c, float *x) {
    for (int i = 0; i < 50; i++)
        x[i] = c[i].prob * 2.0f;
}

int main(void) {
    static float v[300], w[300], x[50];
    static struct cell cells[50];
    for (int i = 0; i < 300; i++) v[i] = (float)(i % 11), w[i] = (float)(i % 5);
    for (int i = 0; i < 50; i++) cells[i].prob = (float)i / 50.0f, cells[i].index = i;
    Acc a = {300, 0.0f, v};
    total(&a);
    walk(w);
    int c = last_index(v);
    probs(cells, x);
    double s = 0.0;
    for (int i = 0; i < 300; i++) s += v[i] + w[i] * (i % 3);
    printf("%.3f %.3f %d %.4f %.4f\n", a.sum, s, c, x[7], w[130]);
    return 0;
}
