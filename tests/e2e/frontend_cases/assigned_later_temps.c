/* Temporaries declared without a value and given one by a later statement of their block: a
 * flux limiter's two slopes (two declarators in one declaration), a clamp assigned and then
 * conditionally reassigned, an index temporary and a running sum assigned before an inner loop,
 * a declaration nothing uses, and a C89 inner iterator declared in the block around its loop. Each function runs at degenerate and at larger sizes. */
#include <stdio.h>

#define MAXN 400

static double a[MAXN * MAXN], f[MAXN * MAXN], g[MAXN], h[MAXN];

static void flux(int n, const double *u, double *out)
{
    for (int j = 1; j < n; j++)
        for (int i = 1; i < n - 1; i++) {
            double dl, dr;
            dl = u[j * n + i] - u[j * n + i - 1];
            dr = u[j * n + i + 1] - u[j * n + i];
            out[j * n + i] = dl * dr;
        }
}

static void clamp_scale(int n, double hi, const double *u, double *out)
{
    for (int i = 0; i < n; i++) {
        double s;
        s = 2.0 * u[i];
        if (s > hi)
            s = hi;
        out[i] = s + 1.0;
    }
}

static void row_sums(int n, const double *u, double *out)
{
    for (int i = 0; i < n; i++) {
        int k;
        double s, t;
        k = i * n;
        s = 0.0;
        for (int j = 0; j < n; j++)
            s += u[k + j];
        t = s;
        t *= 0.5;
        out[i] = t;
    }
}

static void copy_unused(int n, const double *u, double *out)
{
    for (int i = 0; i < n; i++) {
        double unused;
        out[i] = u[i] - 3.0;
    }
}

static void transpose_c89(int n, const double *u, double *out)
{
    for (int i = 0; i < n; i++) {
        int j;
        for (j = 0; j < n; j++)
            out[i * n + j] = u[j * n + i];
    }
}

int main(void)
{
    static const int sizes[] = {0, 1, 2, 3, 57, MAXN};
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++) {
        int n = sizes[s];
        for (int i = 0; i < MAXN * MAXN; i++) {
            a[i] = (double)((i * 37) % 23) - 11.0;
            f[i] = -1.0;
        }
        for (int i = 0; i < MAXN; i++)
            g[i] = h[i] = -2.0;
        flux(n, a, f);
        double sf = 0.0;
        for (int i = 0; i < MAXN * MAXN; i++)
            sf += f[i] * (i % 7 + 1);
        clamp_scale(n, 9.0, a, g);
        row_sums(n, a, h);
        double sg = 0.0, sh = 0.0;
        for (int i = 0; i < MAXN; i++) {
            sg += g[i] * (i % 5 + 1);
            sh += h[i] * (i % 3 + 1);
        }
        copy_unused(n, a, g);
        double su = 0.0;
        for (int i = 0; i < MAXN; i++)
            su += g[i] * (i % 4 + 1);
        transpose_c89(n, a, f);
        double st = 0.0;
        for (int i = 0; i < MAXN * MAXN; i++)
            st += f[i] * (i % 11 + 1);
        printf("n=%d %.6f %.6f %.6f %.6f %.6f\n", n, sf, sg, sh, su, st);
    }
    return 0;
}
