/* The 3-D heat stencil with run-time grid sizes: the index temporary's subscripts are flat with
   two run-time strides (nx and nx*ny). */
#include <stdio.h>
#include <stdlib.h>

static void heat(int nx, int ny, int nz, const float *in, float *out) {
    for (int z = 1; z < nz - 1; z++)
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++) {
                int c = x + y * nx + z * nx * ny;
                out[c] = 0.4f * in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx])
                         + 0.1f * (in[c - nx * ny] + in[c + nx * ny]);
            }
}

int main(void) {
    int nx = 23, ny = 19, nz = 11;
    float *in = malloc(sizeof(float) * nx * ny * nz), *out = calloc((size_t)nx * ny * nz, sizeof(float));
    for (int i = 0; i < nx * ny * nz; i++) in[i] = (float)((i * 37) % 101) / 101.0f;
    heat(nx, ny, nz, in, out);
    double s = 0.0;
    for (int i = 0; i < nx * ny * nz; i++) s += out[i] * (1 + i % 7);
    printf("%.6f %.6f\n", s, out[nx * ny + nx + 1]);
    free(in); free(out);
    return 0;
}
