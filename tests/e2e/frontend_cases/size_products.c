/* Loop bounds that multiply int sizes after a cast to size_t: a field of nq * n points filled
 * through a size_t iterator, an image checksum over w * h * 3 bytes, and a per-batch fill whose
 * inner bound is such a product. The product is computed modulo 2^64, so the generated code must
 * match it: sizes include zero, one and negative pairs whose size_t product is small. */
#include <stddef.h>
#include <stdio.h>

#define MAXE 120000

static double d[MAXE], e[MAXE];
static unsigned char px[MAXE];

static void fill(int nq, int n, double *out)
{
    for (size_t t = 0; t < (size_t)nq * n; t++)
        out[t] = 0.5 * (double)t + 1.0;
}

static double checksum(int w, int h, const unsigned char *p)
{
    double s = 0.0;
    for (size_t i = 0; i < (size_t)w * h * 3; i++)
        s += p[i] * (double)(i % 5 + 1);
    return s;
}

static void batches(int nb, int nq, int n, double *out)
{
    for (int b = 0; b < nb; b++)
        for (size_t t = 0; t < (size_t)nq * n; t++)
            out[(size_t)b * MAXE / 4 + t] = (double)b - 0.25 * (double)t;
}

int main(void)
{
    static const int pairs[][2] = {{0, 0}, {0, 7}, {1, 1}, {3, 0}, {-1, -1}, {-3, -2}, {2, 5}, {300, 400}, {200, 199}, {100, 300}};
    for (int i = 0; i < MAXE; i++)
        px[i] = (unsigned char)((i * 37) % 251);
    for (int k = 0; k < (int)(sizeof pairs / sizeof pairs[0]); k++) {
        int a = pairs[k][0], b = pairs[k][1];
        for (int i = 0; i < MAXE; i++)
            d[i] = e[i] = -1.0;
        fill(a, b, d);
        double sd = 0.0;
        for (int i = 0; i < MAXE; i++)
            sd += d[i] * (i % 7 + 1);
        double sc = (long)a * b * 3 <= MAXE ? checksum(a, b, px) : -1.0;
        if ((long)a * b * 4 <= MAXE)
            batches(4, a, b, e);
        double se = 0.0;
        for (int i = 0; i < MAXE; i++)
            se += e[i] * (i % 3 + 1);
        printf("%d %d %.6f %.6f %.6f\n", a, b, sd, sc, se);
    }
    return 0;
}
