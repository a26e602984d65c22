/* K-means colour quantization (Lloyd's algorithm) of RGBA pixels stored as flat float points
 * [i*dim + d]: the assignment step (nearest centroid, squared distances in double, first
 * index on ties), the update step (per-cluster sums and counts), centroids kept on a 1/16 grid
 * so that every run, in any summation order, finds the same clusters; then the
 * quantization error.
 *
 *   ./kmeans [scale] [iterations]      (default 1 5: 65536 pixels, 16 clusters; benchmark 32 10)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int n;          /* points */
    int dim;        /* coordinates per point */
    int k;          /* clusters */
    float *points;  /* n x dim */
    float *centroids;   /* k x dim */
    int *labels;    /* n */
} KMeans;

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

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

static int assign(KMeans *km)
{
    int changed = 0;
    // BENCH-OMP: #pragma omp parallel for reduction(+:changed)
    for (int i = 0; i < km->n; i++) {
        double best = INFINITY;
        int best_c = 0;
        for (int c = 0; c < km->k; c++) {
            double d2 = 0.0;
            for (int d = 0; d < km->dim; d++) {
                double diff = (double)km->points[i * km->dim + d] - km->centroids[c * km->dim + d];
                d2 += diff * diff;
            }
            if (d2 < best) {
                best = d2;
                best_c = c;
            }
        }
        changed += km->labels[i] != best_c;
        km->labels[i] = best_c;
    }
    return changed;
}

static void update(KMeans *km, double *sums, int *counts)
{
    for (int c = 0; c < km->k; c++) {
        counts[c] = 0;
        for (int d = 0; d < km->dim; d++)
            sums[c * km->dim + d] = 0.0;
    }
    for (int i = 0; i < km->n; i++) {
        int c = km->labels[i];
        counts[c]++;
        for (int d = 0; d < km->dim; d++)
            sums[c * km->dim + d] += km->points[i * km->dim + d];
    }
    for (int c = 0; c < km->k; c++)
        if (counts[c] > 0)
            for (int d = 0; d < km->dim; d++)
                km->centroids[c * km->dim + d] = (float)(rint(sums[c * km->dim + d] / counts[c] * 16.0) / 16.0);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int iterations = argc > 2 ? atoi(argv[2]) : 5;
    KMeans km;
    double *sums, sse = 0.0, t0, t1;
    int *counts;
    uint32_t state = 31337u;
    long long label_sum = 0, changes = 0;

    if (scale < 1 || iterations < 1) { fprintf(stderr, "usage: %s [scale>=1] [iterations>=1]\n", argv[0]); return 2; }
    km.n = 65536 * scale;
    km.dim = 4;
    km.k = 16;
    km.points = xmalloc((size_t)km.n * km.dim * sizeof(float));
    km.centroids = xmalloc((size_t)km.k * km.dim * sizeof(float));
    km.labels = xmalloc((size_t)km.n * sizeof(int));
    sums = xmalloc((size_t)km.k * km.dim * sizeof(double));
    counts = xmalloc((size_t)km.k * sizeof(int));
    for (int i = 0; i < km.n; i++) {
        int blob = i % 7;
        for (int d = 0; d < km.dim; d++) {
            state = state * 1103515245u + 12345u;
            int center = (blob * 37 + d * 61) % 256;
            int v = center + (int)((state >> 16) % 64u) - 32;
            km.points[i * km.dim + d] = (float)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        km.labels[i] = -1;
    }
    for (int c = 0; c < km.k; c++)
        for (int d = 0; d < km.dim; d++)
            km.centroids[c * km.dim + d] = km.points[(c * 997 % km.n) * km.dim + d];

    t0 = now();
    for (int it = 0; it < iterations; it++) {
        changes += assign(&km);
        update(&km, sums, counts);
    }
    for (int i = 0; i < km.n; i++)
        for (int d = 0; d < km.dim; d++) {
            double diff = (double)km.points[i * km.dim + d] - km.centroids[km.labels[i] * km.dim + d];
            sse += diff * diff;
        }
    t1 = now();

    for (int i = 0; i < km.n; i++)
        label_sum += (long long)km.labels[i] * (i % 7 + 1);
    printf("ichecksum labels %lld\n", label_sum);
    printf("ichecksum changes %lld\n", changes);
    checksum("centroids", km.centroids, (long)km.k * km.dim);
    printf("checksum sse %.10e %.10e %.10e\n", sse, sse, sse);
    printf("time_s %.6f\n", t1 - t0);
    free(km.points); free(km.centroids); free(km.labels); free(sums); free(counts);
    return 0;
}
