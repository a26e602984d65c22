/* Clamped neighbours on flat images whose row length is only known at run time: the reads the
 * selects never take (column -1 at x == 0, column w at x == w - 1, row -1 at y == 0) leave the
 * rows of the view, the evaluated ones do not. */
#include <stdio.h>
#include <stdlib.h>

static void smooth_rows(float *out, const float *in, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int c = y * w + x;
            out[c] = 0.5f * in[c] + 0.25f * (in[x == 0 ? c : c - 1] + in[x == w - 1 ? c : c + 1]);
        }
}

static void smooth_cols(float *out, const float *in, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = in[y * w + x] - 0.5f * (y > 0 ? in[(y - 1) * w + x] : in[y * w + x])
                           + (x + 1 < w ? 0.25f * in[y * w + x + 1] : 0.0f);
}

int main(int argc, char **argv) {
    int w = argc > 1 ? atoi(argv[1]) : 67, h = argc > 2 ? atoi(argv[2]) : 45;
    float *in = malloc(sizeof(float) * w * h), *a = malloc(sizeof(float) * w * h), *b = malloc(sizeof(float) * w * h);
    for (int i = 0; i < w * h; i++) in[i] = (float)((i * 7) % 23) / 23.0f;
    smooth_rows(a, in, w, h);
    smooth_cols(b, a, w, h);
    double s = 0.0;
    for (int i = 0; i < w * h; i++) s += b[i] * (i % 5 + 1) + a[i];
    printf("%.6e\n", s);
    free(in), free(a), free(b);
    return 0;
}
