/* Two-dimensional arrays of structs: a cell grid with fixed rows and one with run-time rows. */
#include <stdio.h>
#include <stdlib.h>

typedef struct { float u, v, p; } Cell;

static void relax(Cell (*g)[64], float (*out)[64], int n) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < 63; j++)
            out[i][j] = 0.25f * (g[i - 1][j].u + g[i + 1][j].u + g[i][j - 1].v + g[i][j + 1].v) - g[i][j].p;
}

static void pressure(int n, int m, Cell (*g)[m], const float *w) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            g[i][j].p = w[j] * (g[i][j].u - g[i][j].v);
}

int main(void) {
    int n = 50, m = 37;
    Cell (*a)[64] = malloc(sizeof(Cell[64]) * 50);
    Cell (*b)[m] = malloc(sizeof(Cell) * (size_t)(n * m));
    float (*out)[64] = calloc(50, sizeof(float[64]));
    float *w = malloc(sizeof(float) * (size_t)m);
    for (int i = 0; i < 50; i++)
        for (int j = 0; j < 64; j++)
            a[i][j].u = (float)((i * 7 + j) % 13), a[i][j].v = (float)((i + 3 * j) % 11), a[i][j].p = 0.1f * (float)j;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            b[i][j].u = (float)((i * 5 + j) % 9), b[i][j].v = (float)(j % 4), b[i][j].p = 0.0f;
    for (int j = 0; j < m; j++) w[j] = 1.0f + (float)j / (float)m;
    relax(a, out, 50);
    pressure(n, m, b, w);
    double s = 0.0;
    for (int i = 0; i < 50; i++)
        for (int j = 0; j < 64; j++) s += out[i][j] * (j % 5 + 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) s += b[i][j].p * (i % 3 + 1);
    printf("%.6e\n", s);
    free(a), free(b), free(out), free(w);
    return 0;
}
