/* Hoisted members under overlap: the generated code loads p->k once, so a call whose written
   pointer covers p->k itself (or whose two member pointers overlap) must run the original nest. */
#include <stdio.h>

struct params {
    float k;
    float pad[15];
    int n;
};

struct pair {
    float *src;
    float *dst;
    int n;
};

static void scale(float *y, const struct params *p) {
    for (int i = 0; i < p->n; i++)
        y[i] = y[i] * p->k + 1.0f;
}

static void shift(struct pair *q) {
    for (int i = 0; i < q->n; i++)
        q->dst[i] = q->src[i] * 0.5f + q->src[i + 1];
}

int main(void) {
    static float buf[2000];
    struct params p = {1.5f, {0}, 16};
    for (int i = 0; i < 16; i++) p.pad[i > 14 ? 14 : i] = (float)i;
    for (int i = 0; i < 2000; i++) buf[i] = (float)(i % 9) * 0.25f;
    scale(buf, &p);                 /* no overlap: the generated code runs */
    scale((float *)&p, &p);         /* y[0] is p->k: each later element sees the new k */
    printf("%.6f %.6f %.6f %.6f\n", buf[3], p.k, p.pad[3], p.pad[14]);
    struct pair a = {buf, buf + 1000, 900}, b = {buf + 1, buf, 1500};
    shift(&a);                      /* disjoint halves */
    shift(&b);                      /* dst overlaps src: sequential semantics */
    double s = 0.0;
    for (int i = 0; i < 2000; i++) s += buf[i] * (1 + i % 7);
    printf("%.6f %.6f %.6f\n", s, buf[10], buf[1500]);
    return 0;
}
