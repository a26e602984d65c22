/* Conway's Game of Life on a torus, the way small simulation codes write it: two byte grids
 * swapped after every generation, neighbours found with remainders ((y + h - 1) % h, (x + 1) % w)
 * so the edges wrap around, the rule as a table lookup, and statistics per generation (the
 * population and the cells born).
 *
 *   ./life_torus [scale] [generations]   (default 1 40: 512 x 384 cells; the benchmark uses 6 60)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned char cell_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* rule[alive][neighbours]: B3/S23 */
static const cell_t rule[2][9] = {{0, 0, 0, 1, 0, 0, 0, 0, 0}, {0, 0, 1, 1, 0, 0, 0, 0, 0}};

static void generation(const cell_t *cur, cell_t *next, int w, int h)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int y = 0; y < h; y++) {
        int ym = (y + h - 1) % h, yp = (y + 1) % h;
        for (int x = 0; x < w; x++) {
            int xm = (x + w - 1) % w, xp = (x + 1) % w;
            int n = cur[ym * w + xm] + cur[ym * w + x] + cur[ym * w + xp]
                  + cur[y * w + xm] + cur[y * w + xp]
                  + cur[yp * w + xm] + cur[yp * w + x] + cur[yp * w + xp];
            next[y * w + x] = rule[cur[y * w + x]][n];
        }
    }
}

static long births(const cell_t *before, const cell_t *after, long cells)
{
    long b = 0;
    // BENCH-OMP: #pragma omp parallel for reduction(+:b)
    for (long i = 0; i < cells; i++)
        b += before[i] == 0 && after[i] != 0;
    return b;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int gens = argc > 2 ? atoi(argv[2]) : 40;
    if (scale < 1 || gens < 1) {
        fprintf(stderr, "usage: %s [scale>=1] [generations>=1]\n", argv[0]);
        return 2;
    }
    int w = 512 * scale, h = 384 * scale;
    long cells = (long)w * h;
    cell_t *a = malloc(cells), *b = malloc(cells);
    if (!a || !b) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    unsigned s = 2463534242u;
    for (long i = 0; i < cells; i++) {
        s ^= s << 13; s ^= s >> 17; s ^= s << 5;
        a[i] = (s % 100) < 31;
    }
    memset(b, 0, cells);
    long born = 0;
    unsigned long pop_hash = 0;
    double t0 = now();
    for (int g = 0; g < gens; g++) {
        generation(a, b, w, h);
        born += births(a, b, cells);
        cell_t *t = a; a = b; b = t;
        long pop = 0;
        for (long i = 0; i < cells; i++)
            pop += a[i];
        pop_hash = (pop_hash * 31u + (unsigned long)pop) % 1000000007u;
    }
    double t1 = now();
    long pop = 0, weighted = 0;
    for (long i = 0; i < cells; i++) {
        pop += a[i];
        weighted += a[i] * (i % 13 + 1);
    }
    printf("ichecksum population %ld\n", pop);
    printf("ichecksum weighted %ld\n", weighted);
    printf("ichecksum born %ld\n", born);
    printf("ichecksum history %lu\n", pop_hash);
    printf("time_s %.6f\n", t1 - t0);
    free(a);
    free(b);
    return 0;
}
