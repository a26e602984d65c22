/* Out-of-row reads that a select does not exclude, or of an array the nest writes: kept. */
#include <stdio.h>
#include <stdlib.h>

static void unguarded(float *out, const float *in, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = in[y * w + x] + in[y * w + x + 1];
}

static void wrong_side(float *out, const float *in, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = x == 0 ? in[y * w + x - 1] : in[y * w + x];
}

static void in_place(float *a, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            a[w + y * w + x] = 0.5f * (x == 0 ? a[y * w + x] : a[y * w + x - 1]);
}

int main(void) {
    int w = 31, h = 17;
    float *in = calloc((size_t)(w * h + w + 1), sizeof(float)), *out = calloc((size_t)(w * h), sizeof(float));
    float *a = calloc((size_t)(w * h + w), sizeof(float));
    for (int i = 0; i < w * h; i++) in[i + 1] = (float)(i % 9), a[i] = (float)(i % 4);
    unguarded(out, in + 1, w, h - 1);
    wrong_side(out, in + 1, w, h);
    in_place(a, w, h);
    double s = 0.0;
    for (int i = 0; i < w * h; i++) s += out[i] * (i % 3 + 1) + a[i + w];
    printf("%.4f\n", s);
    return 0;
}
