/* A 3-D heat-diffusion stencil on a chip-like grid (in the style of Rodinia's hotspot3D): a
 * 7-point update on flat arrays with an index temporary per cell and clamped neighbour indices,
 * a power source term, pointer swaps between time steps, then a gradient-energy reduction over
 * the same data seen as a 3-D array, with ternary subscripts at the boundary.
 *
 *   ./heat3d [scale] [steps]        (default 1 10: 64x64x8; the benchmark uses 8 100)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void checksum(const char *name, const float *x, long n)
{
    double s = 0.0, w = 0.0, a = 0.0;
    long i;
    for (i = 0; i < n; i++) {
        s += x[i];
        w += x[i] * (double)(i % 13 + 1);
        a += fabs(x[i]);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

static void hotspot_step(const float *pIn, const float *tIn, float *tOut, int nx, int ny, int nz,
                         float ce, float cw, float cn, float cs, float ct, float cb, float cc,
                         float stepDivCap, float amb)
{
    int x, y, z;
    // BENCH-OMP: #pragma omp parallel for private(x, y)
    for (z = 0; z < nz; z++)
        for (y = 0; y < ny; y++)
            for (x = 0; x < nx; x++) {
                int c = x + y * nx + z * nx * ny;
                int w = (x == 0) ? c : c - 1;
                int e = (x == nx - 1) ? c : c + 1;
                int n = (y == 0) ? c : c - nx;
                int s = (y == ny - 1) ? c : c + nx;
                int b = (z == 0) ? c : c - nx * ny;
                int t = (z == nz - 1) ? c : c + nx * ny;
                tOut[c] = tIn[c] * cc + tIn[n] * cn + tIn[s] * cs + tIn[e] * ce + tIn[w] * cw
                        + tIn[t] * ct + tIn[b] * cb + stepDivCap * pIn[c] + ct * amb;
            }
}

static double gradient_energy(int nx, int ny, int nz, const float *buf)
{
    const float (*I)[ny][nx] = (const float (*)[ny][nx])buf;
    double energy = 0.0;
    int x, y, z;
    // BENCH-OMP: #pragma omp parallel for private(x, y) reduction(+:energy)
    for (z = 0; z < nz; z++)
        for (y = 0; y < ny; y++)
            for (x = 0; x < nx; x++) {
                float dx = I[z][y][x == nx - 1 ? x : x + 1] - I[z][y][x == 0 ? x : x - 1];
                float dy = I[z][y == ny - 1 ? y : y + 1][x] - I[z][y == 0 ? y : y - 1][x];
                float dz = I[z == nz - 1 ? z : z + 1][y][x] - I[z == 0 ? z : z - 1][y][x];
                energy += (double)(dx * dx + dy * dy + dz * dz);
            }
    return energy;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    int nx, ny, nz, i, it;
    long size;
    float *power, *tIn, *tOut, *tmp;
    unsigned state = 7u;
    double t0, t1, energy;

    if (scale < 1 || steps < 1) { fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]); return 2; }
    nx = 64 * scale;
    ny = 64 * scale;
    nz = 8;
    size = (long)nx * ny * nz;

    /* chip parameters as in hotspot3D */
    float t_chip = 0.0005f, chip_height = 0.016f, chip_width = 0.016f;
    float dx = chip_height / nx, dy = chip_width / ny, dz = t_chip / nz;
    float Cap = 0.5f * 1.75e6f * t_chip * dx * dy;
    float Rx = dy / (2.0f * 100.0f * t_chip * dx);
    float Ry = dx / (2.0f * 100.0f * t_chip * dy);
    float Rz = dz / (100.0f * dx * dy);
    float max_slope = 3.0e6f / (0.5f * t_chip * 1.75e6f);
    float dt = 0.001f / max_slope;
    float stepDivCap = dt / Cap;
    float ce = stepDivCap / Rx, cw = ce, cn = stepDivCap / Ry, cs = cn, ct = stepDivCap / Rz, cb = ct;
    float cc = 1.0f - (2.0f * ce + 2.0f * cn + 3.0f * ct);

    power = malloc(size * sizeof(float));
    tIn = malloc(size * sizeof(float));
    tOut = malloc(size * sizeof(float));
    if (!power || !tIn || !tOut) { fprintf(stderr, "out of memory\n"); return 1; }
    for (i = 0; i < size; i++) {
        state = state * 1103515245u + 12345u;
        power[i] = (float)((state >> 16) % 1000u) * 1e-3f;
        tIn[i] = 320.0f + (float)(i % 97) * 0.05f;
        tOut[i] = 0.0f;
    }

    t0 = now();
    for (it = 0; it < steps; it++) {
        hotspot_step(power, tIn, tOut, nx, ny, nz, ce, cw, cn, cs, ct, cb, cc, stepDivCap, 80.0f);
        tmp = tIn;
        tIn = tOut;
        tOut = tmp;
    }
    energy = gradient_energy(nx, ny, nz, tIn);
    t1 = now();

    checksum("temperature", tIn, size);
    printf("checksum energy %.10e %.10e %.10e\n", energy, energy, fabs(energy));
    printf("time_s %.6f\n", t1 - t0);
    free(power); free(tIn); free(tOut);
    return 0;
}
