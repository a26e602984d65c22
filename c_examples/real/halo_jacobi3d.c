/* A 3-D Poisson solver by Jacobi sweeps on a grid padded with one layer of halo (ghost) cells,
 * written the way small finite-difference codes are: a macro IDX over (nx + 2) x (ny + 2) rows,
 * periodic halos refreshed by copy loops before every sweep, the sweep itself, a residual norm
 * and a pointer swap. Checksums of the field and the residual history are printed.
 *
 *   ./halo_jacobi3d [scale] [sweeps]   (default 1 10: 48x48x48; the benchmark uses 3 40)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define IDX(i, j, k) ((((long)(k)) * (ny + 2) + (j)) * (nx + 2) + (i))

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

/* periodic halos: x faces, then y faces (with the x halo), then z faces (with both) */
static void refresh_halos(int nx, int ny, int nz, double *u)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= ny; j++) {
            u[IDX(0, j, k)] = u[IDX(nx, j, k)];
            u[IDX(nx + 1, j, k)] = u[IDX(1, j, k)];
        }
    // BENCH-OMP: #pragma omp parallel for
    for (int k = 1; k <= nz; k++)
        for (int i = 0; i <= nx + 1; i++) {
            u[IDX(i, 0, k)] = u[IDX(i, ny, k)];
            u[IDX(i, ny + 1, k)] = u[IDX(i, 1, k)];
        }
    // BENCH-OMP: #pragma omp parallel for
    for (int j = 0; j <= ny + 1; j++)
        for (int i = 0; i <= nx + 1; i++) {
            u[IDX(i, j, 0)] = u[IDX(i, j, nz)];
            u[IDX(i, j, nz + 1)] = u[IDX(i, j, 1)];
        }
}

static void sweep(int nx, int ny, int nz, double h2, const double *u, const double *f, double *un)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++)
                un[IDX(i, j, k)] = (u[IDX(i - 1, j, k)] + u[IDX(i + 1, j, k)] + u[IDX(i, j - 1, k)]
                                    + u[IDX(i, j + 1, k)] + u[IDX(i, j, k - 1)] + u[IDX(i, j, k + 1)]
                                    - h2 * f[IDX(i, j, k)]) / 6.0;
}

static double residual(int nx, int ny, int nz, double h2, const double *u, const double *f)
{
    double r2 = 0.0;
    // BENCH-OMP: #pragma omp parallel for reduction(+:r2)
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++) {
                double r = u[IDX(i - 1, j, k)] + u[IDX(i + 1, j, k)] + u[IDX(i, j - 1, k)] + u[IDX(i, j + 1, k)]
                           + u[IDX(i, j, k - 1)] + u[IDX(i, j, k + 1)] - 6.0 * u[IDX(i, j, k)] - h2 * f[IDX(i, j, k)];
                r2 += r * r;
            }
    return sqrt(r2);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int sweeps = argc > 2 ? atoi(argv[2]) : 10;
    if (scale < 1 || sweeps < 1) { fprintf(stderr, "usage: %s [scale>=1] [sweeps>=1]\n", argv[0]); return 2; }
    int nx = 48 * scale, ny = 48 * scale, nz = 32 * scale;
    long cells = (long)(nx + 2) * (ny + 2) * (nz + 2);
    double *u = calloc(cells, sizeof *u), *un = calloc(cells, sizeof *un), *f = calloc(cells, sizeof *f);
    double hist[4] = {0.0, 0.0, 0.0, 0.0};
    if (!u || !un || !f) { fprintf(stderr, "out of memory\n"); return 1; }
    const double h = 1.0 / nx, h2 = h * h;
    for (int k = 1; k <= nz; k++)
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i <= nx; i++) {
                double x = (i - 0.5) * h, y = (j - 0.5) / ny, z = (k - 0.5) / nz;
                f[IDX(i, j, k)] = sin(6.283185307179586 * x) * cos(6.283185307179586 * y) * (z - 0.5);
                u[IDX(i, j, k)] = 0.01 * ((i * 7 + j * 13 + k * 5) % 17);
            }
    double t0 = now();
    for (int s = 0; s < sweeps; s++) {
        refresh_halos(nx, ny, nz, u);
        sweep(nx, ny, nz, h2, u, f, un);
        double *t = u; u = un; un = t;
        if (s % (sweeps / 4 > 0 ? sweeps / 4 : 1) == 0 && s / (sweeps / 4 > 0 ? sweeps / 4 : 1) < 4) {
            refresh_halos(nx, ny, nz, u);
            hist[s / (sweeps / 4 > 0 ? sweeps / 4 : 1)] = residual(nx, ny, nz, h2, u, f);
        }
    }
    refresh_halos(nx, ny, nz, u);
    double res = residual(nx, ny, nz, h2, u, f);
    double t1 = now();
    checksum("field", u, cells);
    checksum("residuals", hist, 4);
    printf("checksum final %.10e %.10e %.10e\n", res, res, res);
    printf("time_s %.6f\n", t1 - t0);
    free(u); free(un); free(f);
    return 0;
}
