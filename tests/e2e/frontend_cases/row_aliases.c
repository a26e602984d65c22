/* Local aliases of the rows of row-pointer grids (double **), the way grid codes write them:
 * const double *ur = u[j]; double *fr = f[j]; -- read and written through the alias. One call
 * passes the same grid as input and output (an update in place through overlapping rows): the
 * run-time check of the written rows must send it to the nest as written. */
#include <stdio.h>
#include <stdlib.h>

static void flux_rows(int ny, int nx, double **u, double **f)
{
    for (int j = 0; j < ny; j++) {
        const double *ur = u[j];
        double *fr = f[j];
        for (int i = 1; i < nx; i++)
            fr[i] = ur[i] * ur[i] - 0.5 * ur[i - 1];
    }
}

static void smooth_rows(int ny, int nx, double *const *u, double **v)
{
    for (int j = 1; j < ny - 1; j++) {
        const double *up = u[j - 1], *mid = u[j], *down = u[j + 1];
        double *out = v[j] + 1;               /* an alias one element into the row */
        for (int i = 1; i < nx - 1; i++)
            out[i - 1] = 0.25 * (up[i] + down[i] + mid[i - 1] + mid[i + 1]);
    }
}

static double **grid(int ny, int nx, double *block)
{
    double **g = malloc((ny > 0 ? ny : 1) * sizeof *g);
    for (int j = 0; j < ny; j++)
        g[j] = block + (long)j * nx;
    return g;
}

static double checksum(int ny, int nx, double **g)
{
    double s = 0.0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            s = 0.999 * s + g[j][i] * (double)((i + 3 * j) % 7 + 1);
    return s;
}

int main(void)
{
    static const int sizes[][2] = {{0, 0}, {1, 1}, {3, 2}, {5, 9}, {64, 130}, {300, 200}};
    for (int c = 0; c < 6; c++) {
        int ny = sizes[c][0], nx = sizes[c][1];
        double *ub = calloc((size_t)ny * nx + 1, sizeof *ub), *fb = calloc((size_t)ny * nx + 1, sizeof *fb);
        double **u = grid(ny, nx, ub), **f = grid(ny, nx, fb);
        for (int k = 0; k < ny * nx; k++)
            ub[k] = (double)((k * 37 + 5) % 29) - 14.0;
        flux_rows(ny, nx, u, f);
        double s1 = checksum(ny, nx, f);
        smooth_rows(ny, nx, u, f);
        double s2 = checksum(ny, nx, f);
        smooth_rows(ny, nx, u, u);             /* in place: rows overlap, runs as written */
        double s3 = checksum(ny, nx, u);
        printf("%d %d: %.10e %.10e %.10e\n", ny, nx, s1, s2, s3);
        free(u); free(f); free(ub); free(fb);
    }
    return 0;
}
