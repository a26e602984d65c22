/* A gather whose index the nest computes (an argmax per row), which no inspection can run ahead
 * of the nest: beside a written pointer of another arithmetic type it needs no check (a float
 * store cannot change a double), beside one of the same type it stays as written. */
#include <stdio.h>
#include <stdlib.h>

static void pick(float *out, const double *score, const double *table, int n, int m)
{
    for (int i = 0; i < n; i++) {
        int b = 0;
        double best = score[i * m];
        for (int k = 1; k < m; k++)
            if (score[i * m + k] > best) {
                best = score[i * m + k];
                b = k;
            }
        out[i] = (float)(2.0 * table[b]);
    }
}

static void pick_same(double *out, const double *score, const double *table, int n, int m)
{
    for (int i = 0; i < n; i++) {
        int b = 0;
        double best = score[i * m];
        for (int k = 1; k < m; k++)
            if (score[i * m + k] > best) {
                best = score[i * m + k];
                b = k;
            }
        out[i] = 2.0 * table[b];
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, m = argc > 2 ? atoi(argv[2]) : 5;
    double *score = malloc(sizeof(double) * n * m), *table = malloc(sizeof(double) * (m + n));
    float *out = malloc(sizeof(float) * n);
    for (int i = 0; i < n * m; i++) score[i] = (double)((i * 7919) % 1009);
    for (int k = 0; k < m + n; k++) table[k] = 0.5 * k + 1.0;
    pick(out, score, table, n, m);
    pick_same(table + m, score, table, n, m);   /* the output overlaps the table it gathers from */
    double s = 0.0;
    for (int i = 0; i < n; i++) s += out[i] * (i % 5 + 1) + table[m + i];
    printf("%.10e\n", s);
    return 0;
}
