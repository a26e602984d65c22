/* A 2-D blur over flat images with a run-time row length, indexed through a temporary, C89
   style (declared at the top, assigned in the nest); the border clamps through selects. */
#include <stdio.h>
#include <stdlib.h>

static void blur(int nx, int ny, const float *in, float *out) {
    int x, y, c;
    for (y = 1; y < ny - 1; y++)
        for (x = 1; x < nx - 1; x++) {
            c = y * nx + x;
            out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx]);
        }
}

#define W 40
static void clamp_rows(const float img[][W], float res[][W], int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < W; x++) {
            int up = y == 0 ? y : y - 1;
            int down = y == h - 1 ? y : y + 1;
            res[y][x] = 0.25f * img[up][x] + 0.5f * img[y][x] + 0.25f * img[down][x];
        }
}

int main(void) {
    int nx = 37, ny = 29;
    float *in = malloc(sizeof(float) * nx * ny), *out = calloc((size_t)nx * ny, sizeof(float));
    for (int i = 0; i < nx * ny; i++) in[i] = (float)((i * 29) % 31) / 31.0f;
    blur(nx, ny, in, out);
    static float img[25][W], res[25][W];
    for (int y = 0; y < 25; y++)
        for (int x = 0; x < W; x++) img[y][x] = (float)((x * 3 + y * 7) % 19);
    clamp_rows(img, res, 25);
    double s = 0.0, r = 0.0;
    for (int i = 0; i < nx * ny; i++) s += out[i] * (1 + i % 4);
    for (int y = 0; y < 25; y++)
        for (int x = 0; x < W; x++) r += res[y][x] * (1 + (x + y) % 3);
    printf("%.6f %.6f %.6f\n", s, r, out[nx + 1]);
    free(in); free(out);
    return 0;
}
