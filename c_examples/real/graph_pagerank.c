/* PageRank on a synthetic web graph, written the way graph code is: an edge list turned into a
 * CSR structure (degree counts, a prefix sum, cursors), power iterations that gather the ranks of
 * each node's in-neighbours through an index temporary (int src = col[e]), the rank of dangling
 * nodes spread over all, an L1 convergence test, the top nodes found by an argmax through its own
 * index (if (score[i] > score[best]) best = i), and the final ranks quantized to 8 bits per group of a run-time size (g < n / gs).
 *
 *   ./graph_pagerank [scale] [iterations]   (default 1 20: 200,000 nodes, 8 edges each;
 *                                            the benchmark uses 4 30)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int n, m;
    int *rowptr;   /* n + 1 offsets into col: the in-edges of each node */
    int *col;      /* source node of each in-edge */
    int *outdeg;   /* out-degree of each node */
} Graph;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned lcg(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static Graph build(int n, int per_node, unsigned seed)
{
    Graph g;
    g.n = n;
    g.m = n * per_node;
    int *src = malloc(sizeof(int) * g.m), *dst = malloc(sizeof(int) * g.m);
    for (int e = 0; e < g.m; e++) {            /* preferential-ish: low ids are popular */
        unsigned r = lcg(&seed);
        src[e] = e / per_node;
        dst[e] = (r % 4 == 0) ? (int)(r % 64) : (int)((r >> 3) % (unsigned)n);
    }
    g.rowptr = calloc(n + 1, sizeof(int));
    g.outdeg = calloc(n, sizeof(int));
    for (int e = 0; e < g.m; e++) {
        g.rowptr[dst[e] + 1]++;
        g.outdeg[src[e]]++;
    }
    for (int i = 0; i < n; i++)
        g.rowptr[i + 1] += g.rowptr[i];
    int *cursor = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        cursor[i] = g.rowptr[i];
    g.col = malloc(sizeof(int) * g.m);
    for (int e = 0; e < g.m; e++)
        g.col[cursor[dst[e]]++] = src[e];
    free(cursor);
    free(src);
    free(dst);
    return g;
}

/* one power iteration: returns the L1 change */
static double step(const Graph *g, const double *pr, double *npr, double d)
{
    int n = g->n;
    double dangling = 0.0;
    for (int i = 0; i < n; i++)
        if (g->outdeg[i] == 0)
            dangling += pr[i];
    double base = (1.0 - d) / n + d * dangling / n;
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int e = g->rowptr[i]; e < g->rowptr[i + 1]; e++) {
            int src = g->col[e];
            s += pr[src] / g->outdeg[src];
        }
        npr[i] = base + d * s;
    }
    double diff = 0.0;
    for (int i = 0; i < n; i++)
        diff += fabs(npr[i] - pr[i]);
    return diff;
}

/* the index of the largest score (the first of equal ones) */
static int best_node(int n, const double *score)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (score[i] > score[best])
            best = i;
    return best;
}

static void quantize(int n, int gs, const double *x, unsigned char *q, double *scale)
{
    for (int g = 0; g < n / gs; g++) {
        double hi = 0.0;
        for (int i = 0; i < gs; i++)
            hi = fmax(hi, x[g * gs + i]);
        double s = hi > 0.0 ? hi / 255.0 : 1.0;
        scale[g] = s;
        for (int i = 0; i < gs; i++)
            q[g * gs + i] = (unsigned char) lrint(x[g * gs + i] / s);
    }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    int n = 200000 * scale, gs = 250;
    Graph g = build(n, 8, 12345u);
    double *pr = malloc(sizeof(double) * n), *npr = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        pr[i] = 1.0 / n;

    double t0 = now();
    double diff = 0.0;
    for (int it = 0; it < iters; it++) {
        diff = step(&g, pr, npr, 0.85);
        double *t = pr;
        pr = npr;
        npr = t;
    }
    double *score = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        score[i] = pr[i];
    long top_sum = 0;
    for (int k = 0; k < 10; k++) {
        int b = best_node(n, score);
        score[b] = -1.0;
        top_sum += (long)b * (k + 1);
    }
    unsigned char *q = malloc(n);
    double *qs = malloc(sizeof(double) * (n / gs + 1));
    quantize(n, gs, pr, q, qs);
    double t1 = now();

    double sum = 0.0, weighted = 0.0, abs_sum = 0.0;
    for (int i = 0; i < n; i++) {
        sum += pr[i] * n;
        weighted += pr[i] * n * (i % 13 + 1);
        abs_sum += fabs(pr[i]) * n;
    }
    printf("checksum rank %.10e %.10e %.10e\n", sum, weighted, abs_sum);
    long qsum = 0;
    for (int i = 0; i < n; i++)
        qsum += (long)q[i] * (i % 7 + 1);
    printf("ichecksum top %ld\n", top_sum);
    printf("ichecksum codes %ld\n", qsum);
    printf("checksum diff %.10e %.10e %.10e\n", diff, diff, diff);
    printf("time_s %.6f\n", t1 - t0);
    free(score);
    free(q);
    free(qs);
    free(pr);
    free(npr);
    free(g.rowptr);
    free(g.col);
    free(g.outdeg);
    return 0;
}
