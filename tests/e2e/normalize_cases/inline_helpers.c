/* Pure helpers called in nests: conversions of arguments and results, a helper calling a helper,
 * and a helper that computes a subscript. */
#include <math.h>
#include <stdio.h>

static int half(int v) { return v / 2; }
static float sq(float v) { return v * v; }
static double norm2(double a, double b) { return sqrt(sq(a) + sq(b)); }
static int at(int row, int col, int n) { return row * n + col; }

static void apply(float *out, const float *x, const float *y, int *h, int n) {
    for (int i = 0; i < n; i++) {
        out[i] = (float)norm2(x[i], y[i]) + sq(x[i] - 0.5f);
        h[i] = half(x[i] * 7.0f) + half(-3 - i);
    }
}

static void transpose(float *t, const float *a, int n) {
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            t[at(c, r, n)] = a[at(r, c, n)];
}

#define N 300

int main(void) {
    static float x[N], y[N], out[N], a[N * N], t[N * N];
    static int h[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i % 17) / 3.0f - 2.0f, y[i] = (float)(i % 5) * 1.7f;
    for (int i = 0; i < N * N; i++) a[i] = (float)(i % 31);
    apply(out, x, y, h, N);
    transpose(t, a, 64);
    double s = 0.0;
    long k = 0;
    for (int i = 0; i < N; i++) s += out[i] * (i % 3 + 1);
    for (int i = 0; i < N; i++) k += (long)h[i] * (i % 7 + 1);
    for (int i = 0; i < 64 * 64; i++) s += t[i] * (i % 11);
    printf("%.6e %ld\n", s, k);
    return 0;
}
