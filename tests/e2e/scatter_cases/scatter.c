/* Scatter reductions (mdpoly.frontend.scatter): histograms, a k-means centroid update, charge
 * deposition, a bincount whose counts are too large for a copy per thread, a scatter whose
 * accumulator overlaps its inputs, and the other update forms. `scatter CASE` runs one case
 * (`all`: every one); the output is integers, or floats that add up exactly (sums of integers
 * and of multiples of 1/1024), so that every team size prints what the sequential program does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static unsigned next_rand(unsigned *s) { *s = *s * 1103515245u + 12345u; return *s >> 8; }

/* 8-bit image histogram into a declared array */
void histogram_local(const unsigned char *px, int n, int *out)
{
    int hist[256];
    for (int b = 0; b < 256; b++) hist[b] = 0;
    for (int i = 0; i < n; i++)
        hist[px[i]]++;
    for (int b = 0; b < 256; b++) out[b] = hist[b];
}

/* the same into the caller's counts */
void histogram(const unsigned char *px, int n, int *h)
{
    for (int i = 0; i < n; i++)
        h[px[i]]++;
}

/* k-means: the centroids' sums and counts of the points of each label */
void centroid_sums(const float *x, const int *lab, int n, int d, float *sum, int *cnt)
{
    for (int i = 0; i < n; i++) {
        int c = lab[i];
        cnt[c]++;
        for (int j = 0; j < d; j++)
            sum[c * d + j] += x[i * d + j];
    }
}

/* particle-in-cell: charge deposited in the cell of each particle's position */
void deposit(const double *pos, const double *q, int np, double inv_dx, int ng, double *rho)
{
    for (int p = 0; p < np; p++) {
        int c = (int)(pos[p] * inv_dx);
        if (c >= 0 && c < ng)
            rho[c] += q[p];
    }
}

/* a bincount with a (run-time) number of bins */
void bincount(const int *v, int n, long *counts)
{
    for (int i = 0; i < n; i++)
        counts[v[i]] += 1;
}

/* acc[idx[i]] += val[i], called with acc overlapping its inputs */
void scatter_add(const int *idx, const int *val, int n, int *acc)
{
    for (int i = 0; i < n; i++)
        acc[idx[i]] += val[i];
}

/* the other update forms: A[e] = A[e] + v, |=, fmaxf, -- */
void forms(const int *a, const float *v, const unsigned *bits, int n, float *s, unsigned *m, float *mx, int *d)
{
    for (int i = 0; i < n; i++) {
        s[a[i]] = s[a[i]] + v[i];
        m[a[i]] |= bits[i];
        mx[a[i]] = fmaxf(mx[a[i]], v[i]);
        d[a[i]]--;
    }
}

static unsigned long long check_ints(const int *a, int n)
{
    unsigned long long s = 1469598103934665603ull;
    for (int i = 0; i < n; i++) s = (s ^ (unsigned)a[i]) * 1099511628211ull;
    return s;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    unsigned seed = 7;
    if (all || !strcmp(what, "hist")) {
        int n = 1 << 20;
        unsigned char *px = malloc(n);
        int out[256], h[256];
        for (int i = 0; i < n; i++) px[i] = (unsigned char)(next_rand(&seed) % 200 + (i & 31));
        memset(h, 0, sizeof h);
        histogram_local(px, n, out);
        histogram(px, n, h);
        histogram(px + 5, n - 5, h);
        printf("hist %llu %llu %d %d\n", check_ints(out, 256), check_ints(h, 256), out[17], h[200]);
        free(px);
    }
    if (all || !strcmp(what, "kmeans")) {
        int n = 200000, d = 4, k = 16;
        float *x = malloc(sizeof(float) * n * d), *sum = calloc(k * d, sizeof(float));
        int *lab = malloc(sizeof(int) * n), *cnt = calloc(k, sizeof(int));
        for (int i = 0; i < n * d; i++) x[i] = (float)(next_rand(&seed) % 256);
        for (int i = 0; i < n; i++) lab[i] = (int)(next_rand(&seed) % k);
        centroid_sums(x, lab, n, d, sum, cnt);
        printf("kmeans %llu", check_ints(cnt, k));
        for (int c = 0; c < k * d; c++) printf(" %.9g", sum[c]);
        printf("\n");
        free(x); free(sum); free(lab); free(cnt);
    }
    if (all || !strcmp(what, "pic")) {
        int np = 500000, ng = 1000;
        double *pos = malloc(sizeof(double) * np), *q = malloc(sizeof(double) * np), *rho = calloc(ng, sizeof(double));
        for (int p = 0; p < np; p++) {
            pos[p] = (double)(next_rand(&seed) % 1100000) * 1e-3 - 50.0;   /* some particles outside the grid */
            q[p] = (double)(next_rand(&seed) % 1024) / 1024.0;
        }
        deposit(pos, q, np, 1.0, ng, rho);
        double w = 0.0;
        for (int g = 0; g < ng; g++) w = w * 0.5 + rho[g];
        printf("pic %.17g %.17g %.17g\n", rho[0], rho[ng / 2], w);
        free(pos); free(q); free(rho);
    }
    if (all || !strcmp(what, "overlap")) {
        int n = 300000;
        int *buf = malloc(sizeof(int) * 2 * n), *idx = malloc(sizeof(int) * n);
        for (int i = 0; i < 2 * n; i++) buf[i] = (int)(next_rand(&seed) % 1000);
        for (int i = 0; i < n; i++) idx[i] = (int)(next_rand(&seed) % n);
        scatter_add(idx, buf, n, buf);             /* accumulates into its own values */
        for (int i = 0; i < n; i++) { buf[n + i] = n / 2 + (int)(next_rand(&seed) % (n / 4)); idx[i] &= 1; }
        scatter_add(buf + n, idx, n, buf + n);     /* its section covers indices it reads later */
        printf("overlap %llu\n", check_ints(buf, 2 * n));
        free(buf); free(idx);
    }
    if (all || !strcmp(what, "large")) {
        int n = 400000;
        int *v = malloc(sizeof(int) * n);
        long *counts = calloc(200000, sizeof(long));
        for (int i = 0; i < n; i++) v[i] = (int)(next_rand(&seed) % 200000);
        bincount(v, n, counts);                    /* 1.6 MB of counts: too large for a copy per thread */
        long s = 0;
        for (int b = 0; b < 200000; b++) s = s * 3 + counts[b] * (b % 7 + 1);
        for (int i = 0; i < n; i++) v[i] = (int)(next_rand(&seed) % 1000);
        bincount(v, n, counts);                    /* 8 KB of counts: in parallel */
        for (int b = 0; b < 200000; b++) s = s * 3 + counts[b] * (b % 7 + 1);
        printf("large %ld\n", s);
        free(v); free(counts);
    }
    if (all || !strcmp(what, "forms")) {
        int n = 300000, k = 500;
        int *a = malloc(sizeof(int) * n), *d = calloc(k, sizeof(int));
        float *v = malloc(sizeof(float) * n), *s = calloc(k, sizeof(float)), *mx = malloc(sizeof(float) * k);
        unsigned *bits = malloc(sizeof(unsigned) * n), *m = calloc(k, sizeof(unsigned));
        for (int i = 0; i < n; i++) {
            a[i] = (int)(next_rand(&seed) % k);
            v[i] = (float)(next_rand(&seed) % 100);
            bits[i] = 1u << (next_rand(&seed) % 32);
        }
        for (int b = 0; b < k; b++) mx[b] = -1.0f;
        forms(a, v, bits, n, s, m, mx, d);
        double w = 0.0;
        for (int b = 0; b < k; b++) w = w * 0.5 + s[b] + mx[b];
        printf("forms %llu %llu %.17g %.9g %.9g\n", check_ints(d, k), check_ints((const int *)m, k), w, s[7], mx[9]);
        free(a); free(d); free(v); free(s); free(mx); free(bits); free(m);
    }
    return 0;
}
