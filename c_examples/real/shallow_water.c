/* A 2-D shallow-water solver on a periodic grid (Lax-Friedrichs), flat arrays h, hu, hv indexed
 * [j*nx + i], periodic neighbours as ternaries, the OpenMP pragmas its author wrote on the two
 * hot loops, then the conserved mass and the energy.
 *
 *   ./shallow_water [scale] [steps]      (default 1 20: 256x256; the benchmark uses 6 40)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int nx, ny;
    float dx, dy, dt, g;
} Grid;

typedef struct {
    float *h, *hu, *hv;
} State;

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

static void alloc_state(State *s, long n)
{
    s->h = malloc(n * sizeof(float));
    s->hu = malloc(n * sizeof(float));
    s->hv = malloc(n * sizeof(float));
    if (!s->h || !s->hu || !s->hv) { fprintf(stderr, "out of memory\n"); exit(1); }
}

static void lax_friedrichs(const Grid *gr, const State *in, State *out)
{
    const int nx = gr->nx, ny = gr->ny;
    const float cx = gr->dt / (2.0f * gr->dx), cy = gr->dt / (2.0f * gr->dy), g = gr->g;
    int i, j;

#pragma omp parallel for private(i)
    for (j = 0; j < ny; j++) {
        for (i = 0; i < nx; i++) {
            int c = j * nx + i;
            int e = (i == nx - 1) ? j * nx : c + 1;
            int w = (i == 0) ? j * nx + nx - 1 : c - 1;
            int n = (j == ny - 1) ? i : c + nx;
            int s = (j == 0) ? (ny - 1) * nx + i : c - nx;
            float he = in->h[e], hw = in->h[w], hn = in->h[n], hs = in->h[s];
            float ue = in->hu[e] / he, uw = in->hu[w] / hw, un = in->hu[n] / hn, us = in->hu[s] / hs;
            float ve = in->hv[e] / he, vw = in->hv[w] / hw, vn = in->hv[n] / hn, vs = in->hv[s] / hs;
            out->h[c] = 0.25f * (he + hw + hn + hs)
                      - cx * (in->hu[e] - in->hu[w]) - cy * (in->hv[n] - in->hv[s]);
            out->hu[c] = 0.25f * (in->hu[e] + in->hu[w] + in->hu[n] + in->hu[s])
                       - cx * ((in->hu[e] * ue + 0.5f * g * he * he) - (in->hu[w] * uw + 0.5f * g * hw * hw))
                       - cy * (in->hv[n] * un - in->hv[s] * us);
            out->hv[c] = 0.25f * (in->hv[e] + in->hv[w] + in->hv[n] + in->hv[s])
                       - cx * (in->hu[e] * ve - in->hu[w] * vw)
                       - cy * ((in->hv[n] * vn + 0.5f * g * hn * hn) - (in->hv[s] * vs + 0.5f * g * hs * hs));
        }
    }
}

static double total_energy(const Grid *gr, const State *s)
{
    double energy = 0.0;
    long n = (long)gr->nx * gr->ny;
#pragma omp parallel for reduction(+:energy)
    for (long c = 0; c < n; c++) {
        float u = s->hu[c] / s->h[c], v = s->hv[c] / s->h[c];
        energy += 0.5 * (double)(s->h[c] * (u * u + v * v) + gr->g * s->h[c] * s->h[c]);
    }
    return energy;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    Grid gr;
    State a, b, tmp;
    long n;
    double mass = 0.0, energy, t0, t1;

    if (scale < 1 || steps < 1) { fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]); return 2; }
    gr.nx = 256 * scale;
    gr.ny = 256 * scale;
    gr.dx = 1.0f / gr.nx;
    gr.dy = 1.0f / gr.ny;
    gr.g = 9.81f;
    gr.dt = 0.1f * gr.dx;
    n = (long)gr.nx * gr.ny;
    alloc_state(&a, n);
    alloc_state(&b, n);
    for (int j = 0; j < gr.ny; j++)
        for (int i = 0; i < gr.nx; i++) {
            float x = (i + 0.5f) * gr.dx - 0.5f, y = (j + 0.5f) * gr.dy - 0.3f;
            a.h[j * gr.nx + i] = 1.0f + 0.2f * expf(-60.0f * (x * x + y * y));
            a.hu[j * gr.nx + i] = 0.05f * a.h[j * gr.nx + i];
            a.hv[j * gr.nx + i] = 0.0f;
        }

    t0 = now();
    for (int it = 0; it < steps; it++) {
        lax_friedrichs(&gr, &a, &b);
        tmp = a;
        a = b;
        b = tmp;
    }
    energy = total_energy(&gr, &a);
    for (long c = 0; c < n; c++)
        mass += a.h[c];
    t1 = now();

    checksum("h", a.h, n);
    checksum("hu", a.hu, n);
    checksum("hv", a.hv, n);
    printf("checksum energy %.10e %.10e %.10e\n", energy, energy, fabs(energy));
    printf("checksum mass %.10e %.10e %.10e\n", mass, mass, fabs(mass));
    printf("time_s %.6f\n", t1 - t0);
    free(a.h); free(a.hu); free(a.hv); free(b.h); free(b.hu); free(b.hv);
    return 0;
}
