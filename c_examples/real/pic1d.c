/* A 1-D electrostatic particle-in-cell plasma code (two-stream instability), the way small
 * teaching and research codes write it: particles in arrays of x and v, cloud-in-cell charge
 * deposition onto a periodic grid (a scatter into rho), a field from Gauss's law by a running
 * sum with the mean removed, the field gathered back at each particle, a leapfrog push with
 * periodic wrap-around, and the field energy history.
 *
 *   ./pic1d [scale] [steps]   (default 1 20: 200000 particles, 1024 cells; the benchmark uses 8 40)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int np, ng;
    double L, dx, qm, q;
    double *x, *v;
    double *rho, *E;
    int *cell;
} Plasma;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void checksum(const char *name, const double *x, long n)
{
    double s = 0.0, w = 0.0, a = 0.0;
    for (long i = 0; i < n; i++) {
        s += x[i];
        w += x[i] * (double)(i % 13 + 1);
        a += fabs(x[i]);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

static void deposit(Plasma *P)
{
    const int ng = P->ng;
    double *rho = P->rho;
    for (int g = 0; g < ng; g++)
        rho[g] = 0.0;
    // BENCH-OMP: #pragma omp parallel for reduction(+:rho[:ng])
    for (int p = 0; p < P->np; p++) {
        double s = P->x[p] / P->dx;
        int c = (int)s;
        double f = s - c;
        int c1 = c + 1 == ng ? 0 : c + 1;
        P->cell[p] = c;
        rho[c] += P->q * (1.0 - f);
        rho[c1] += P->q * f;
    }
}

static double field(Plasma *P)
{
    const int ng = P->ng;
    double mean = 0.0, e = 0.0, energy = 0.0;
    for (int g = 0; g < ng; g++)
        mean += P->rho[g];
    mean /= ng;
    for (int g = 0; g < ng; g++) {
        e += (P->rho[g] - mean) * P->dx;
        P->E[g] = e;
    }
    double emean = 0.0;
    for (int g = 0; g < ng; g++)
        emean += P->E[g];
    emean /= ng;
    for (int g = 0; g < ng; g++) {
        P->E[g] -= emean;
        energy += 0.5 * P->E[g] * P->E[g] * P->dx;
    }
    return energy;
}

static void push(Plasma *P, double dt)
{
    const double L = P->L;
    // BENCH-OMP: #pragma omp parallel for
    for (int p = 0; p < P->np; p++) {
        int c = P->cell[p];
        int c1 = c + 1 == P->ng ? 0 : c + 1;
        double f = P->x[p] / P->dx - c;
        double Ep = (1.0 - f) * P->E[c] + f * P->E[c1];
        P->v[p] += P->qm * Ep * dt;
        double xn = P->x[p] + P->v[p] * dt;
        if (xn < 0.0) xn += L;
        if (xn >= L) xn -= L;
        P->x[p] = xn;
    }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    if (scale < 1 || steps < 1) { fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]); return 2; }
    Plasma P;
    P.np = 200000 * scale;
    P.ng = 1024;
    P.L = 2.0 * 3.141592653589793 / 3.06;
    P.dx = P.L / P.ng;
    P.qm = -1.0;
    P.q = -P.L / P.np * P.ng / P.L;
    P.x = malloc(sizeof(double) * P.np);
    P.v = malloc(sizeof(double) * P.np);
    P.cell = malloc(sizeof(int) * P.np);
    P.rho = malloc(sizeof(double) * P.ng);
    P.E = malloc(sizeof(double) * P.ng);
    double energy[64] = {0};
    unsigned s = 12345u;
    for (int p = 0; p < P.np; p++) {
        s = s * 1103515245u + 12345u;
        double u = (double)(s >> 8) / 16777216.0;
        P.x[p] = P.L * ((double)p + 0.5) / P.np + 1e-3 * sin(2.0 * 3.141592653589793 * p / P.np) + 1e-6 * u;
        if (P.x[p] >= P.L) P.x[p] -= P.L;
        P.v[p] = (p % 2 ? 0.2 : -0.2) + 0.01 * (u - 0.5);
    }
    double t0 = now();
    for (int t = 0; t < steps; t++) {
        deposit(&P);
        energy[t % 64] += field(&P);
        push(&P, 0.1);
    }
    double t1 = now();
    checksum("x", P.x, P.np);
    checksum("v", P.v, P.np);
    checksum("rho", P.rho, P.ng);
    checksum("energy", energy, 64);
    printf("time_s %.6f\n", t1 - t0);
    free(P.x); free(P.v); free(P.cell); free(P.rho); free(P.E);
    return 0;
}
