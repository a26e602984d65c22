/* A lattice-Boltzmann (D2Q9, BGK) channel-flow solver: fused pull-streaming and collision on a
 * flat [(y*nx + x)*9 + q] population array, periodic neighbours by wrapping, bounce-back on a
 * cylinder obstacle, a body force driving the flow, pointer swaps between steps; then density,
 * velocity and the total mass.
 *
 *   ./lbm_d2q9 [scale] [steps]      (default 1 20: 128x64; the benchmark uses 4 40)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define Q 9

typedef struct {
    int nx, ny;
    float omega;    /* relaxation rate 1/tau */
    float force;    /* body force along x */
} Lattice;

static const int cx[Q] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
static const int cy[Q] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
static const int opp[Q] = {0, 3, 4, 1, 2, 7, 8, 5, 6};
static const float wq[Q] = {4.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9,
                            1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36};

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

static void stream_collide(const Lattice *L, const float *fin, float *fout, const unsigned char *solid)
{
    const int nx = L->nx, ny = L->ny;
    // BENCH-OMP: #pragma omp parallel for
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            int c = y * nx + x;
            float f[Q];
            for (int q = 0; q < Q; q++) {
                int xs = x - cx[q], ys = y - cy[q];
                xs = xs < 0 ? xs + nx : (xs >= nx ? xs - nx : xs);
                ys = ys < 0 ? ys + ny : (ys >= ny ? ys - ny : ys);
                f[q] = fin[(ys * nx + xs) * Q + q];
            }
            if (solid[c]) {
                for (int q = 0; q < Q; q++)
                    fout[c * Q + q] = f[opp[q]];
            } else {
                float rho = 0.0f, ux = 0.0f, uy = 0.0f;
                for (int q = 0; q < Q; q++) {
                    rho += f[q];
                    ux += f[q] * cx[q];
                    uy += f[q] * cy[q];
                }
                ux = ux / rho + L->force / L->omega;
                uy = uy / rho;
                float usq = 1.5f * (ux * ux + uy * uy);
                for (int q = 0; q < Q; q++) {
                    float cu = 3.0f * (cx[q] * ux + cy[q] * uy);
                    float feq = wq[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
                    fout[c * Q + q] = f[q] + L->omega * (feq - f[q]);
                }
            }
        }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    Lattice L;
    float *f0, *f1, *tmp, *rho, *ux, *uy;
    unsigned char *solid;
    long cells;
    double mass = 0.0, t0, t1;

    if (scale < 1 || steps < 1) { fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]); return 2; }
    L.nx = 128 * scale;
    L.ny = 64 * scale;
    L.omega = 1.0f / 0.6f;
    L.force = 1e-5f;
    cells = (long)L.nx * L.ny;
    f0 = malloc(cells * Q * sizeof(float));
    f1 = malloc(cells * Q * sizeof(float));
    rho = malloc(cells * sizeof(float));
    ux = malloc(cells * sizeof(float));
    uy = malloc(cells * sizeof(float));
    solid = malloc(cells);
    if (!f0 || !f1 || !rho || !ux || !uy || !solid) { fprintf(stderr, "out of memory\n"); return 1; }
    for (int y = 0; y < L.ny; y++)
        for (int x = 0; x < L.nx; x++) {
            int dx = x - L.nx / 4, dy = y - L.ny / 2, r = L.ny / 8;
            solid[y * L.nx + x] = (unsigned char)(dx * dx + dy * dy <= r * r || y == 0 || y == L.ny - 1);
            for (int q = 0; q < Q; q++)
                f0[(y * L.nx + x) * Q + q] = wq[q] * (1.0f + 0.01f * (float)((x * 7 + y * 3 + q) % 11 - 5) / 5.0f);
        }

    t0 = now();
    for (int it = 0; it < steps; it++) {
        stream_collide(&L, f0, f1, solid);
        tmp = f0;
        f0 = f1;
        f1 = tmp;
    }
    // BENCH-OMP: #pragma omp parallel for
    for (long c = 0; c < cells; c++) {
        float r = 0.0f, u = 0.0f, v = 0.0f;
        for (int q = 0; q < Q; q++) {
            r += f0[c * Q + q];
            u += f0[c * Q + q] * cx[q];
            v += f0[c * Q + q] * cy[q];
        }
        rho[c] = r;
        ux[c] = solid[c] ? 0.0f : u / r;
        uy[c] = solid[c] ? 0.0f : v / r;
    }
    for (long c = 0; c < cells; c++)
        mass += rho[c];
    t1 = now();

    checksum("rho", rho, cells);
    checksum("ux", ux, cells);
    checksum("uy", uy, cells);
    printf("checksum mass %.10e %.10e %.10e\n", mass, mass, mass);
    printf("time_s %.6f\n", t1 - t0);
    free(f0); free(f1); free(rho); free(ux); free(uy); free(solid);
    return 0;
}
