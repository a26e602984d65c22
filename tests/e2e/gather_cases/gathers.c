/* Gathers: reads at indices the program computes, in nests that write only scalars they fold
   into (transformed), next to gathers in nests that write arrays or shared scalars (kept). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
double g_total;
static double sse(int n, int d, const float *points, const float *cent, const int *labels)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < d; k++) {
            double diff = (double)points[i * d + k] - cent[labels[i] * d + k];
            s += diff * diff;
        }
    return s;
}
static double loss(int rows, int classes, const float *probs, const int *target)
{
    double l = 0.0;
    for (int b = 0; b < rows; b++)
        l -= log((double)probs[b * classes + target[b]]);
    return l / rows;
}
static long spmv_sum(int n, const int *rowptr, const int *col, const double *val, const double *x, int *argmin)
{
    long hits = 0;
    double best = 1e300;
    int bi = -1;
    for (int i = 0; i < n; i++) {
        double v = val[i] * x[col[i]];
        hits += v > 0.5;
        if (v < best) { best = v; bi = i; }
    }
    *argmin = bi + rowptr[0];
    return hits;
}
static void gather_write(int n, const int *idx, const double *x, double *y)
{
    for (int i = 0; i < n; i++)          /* writes an array: parallel behind the gather's inspection */
        y[i] = x[idx[i]] * 2.0;
}
static void global_acc(int n, const int *idx, const double *x)
{
    for (int i = 0; i < n; i++)          /* folds into a global another pointer may reach: kept */
        g_total += x[idx[i]];
}
static double self_index(int n, const double *x)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)          /* the subscript reads the accumulator: kept */
        s += x[((int)s) % n];
    return s;
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), d = atoi(argv[2]), k = 7;
    float *points = malloc(sizeof(float) * n * d), *cent = malloc(sizeof(float) * k * d);
    int *labels = malloc(sizeof(int) * n), *col = malloc(sizeof(int) * n), *rowptr = malloc(sizeof(int) * 2);
    double *val = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
    float *probs = malloc(sizeof(float) * n * k);
    for (int i = 0; i < n * d; i++) points[i] = (float)((i * 37) % 101) / 50.0f;
    for (int i = 0; i < k * d; i++) cent[i] = (float)((i * 13) % 29) / 14.0f;
    for (int i = 0; i < n; i++) { labels[i] = (i * 5) % k; col[i] = (i * 7919) % n; val[i] = (i % 11) / 5.0; x[i] = (i % 13) / 6.0; }
    for (int i = 0; i < n * k; i++) probs[i] = 0.05f + (float)((i * 17) % 19) / 20.0f;
    rowptr[0] = 3; rowptr[1] = n;
    int am = 0;
    double a = sse(n, d, points, cent, labels), b = loss(n, k, probs, labels);
    long h = spmv_sum(n, rowptr, col, val, x, &am);
    gather_write(n, col, x, y);
    global_acc(n, col, x);
    double c = self_index(n, x);
    double t = 0; for (int i = 0; i < n; i++) t += y[i] * (i % 3 + 1);
    printf("%.9g %.9g %ld %d %.9g %.9g %.9g\n", a, b, h, am, t, g_total, c);
    return 0;
}
