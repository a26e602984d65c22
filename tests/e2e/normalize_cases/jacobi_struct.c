/* A 1-D Jacobi smoother whose grid lives in a struct: a time loop around two sweeps over members. */
#include <stdio.h>
#include <stdlib.h>

struct grid {
    int n;
    float w;
    float *a, *b;
};

static void smooth(struct grid *g, int steps) {
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < g->n - 1; i++)
            g->b[i] = g->w * (g->a[i - 1] + g->a[i] + g->a[i + 1]);
        for (int i = 1; i < g->n - 1; i++)
            g->a[i] = g->b[i];
    }
}

int main(void) {
    struct grid g = {5000, 1.0f / 3.0f, NULL, NULL};
    g.a = malloc(sizeof(float) * g.n);
    g.b = malloc(sizeof(float) * g.n);
    for (int i = 0; i < g.n; i++) {
        g.a[i] = (float)((i * 17) % 23);
        g.b[i] = 0.0f;
    }
    smooth(&g, 20);
    double s = 0.0;
    for (int i = 0; i < g.n; i++) s += g.a[i] * (1 + i % 5);
    printf("%.4f %.6f %.6f\n", s, g.a[1], g.a[2500]);
    free(g.a); free(g.b);
    return 0;
}
