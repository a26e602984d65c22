/* Conditions that read arrays the nest never writes: the k-means centroid update that skips
   empty clusters, a thresholded sum, and a clip with an else branch. */
#include <stdio.h>
#include <stdlib.h>
static void update(int k, int dim, const double *sums, const int *counts, float *cent)
{
    for (int c = 0; c < k; c++)
        if (counts[c] > 0)
            for (int d = 0; d < dim; d++)
                cent[c * dim + d] = (float)(sums[c * dim + d] / counts[c]);
}
static double pos_sum(int n, const double *a)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        if (a[i] > 0.25)
            s += a[i];
    return s;
}
static void clip(int n, int m, const float *a, float *b)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            if (a[i * m + j] > 0.5f)
                b[i * m + j] = 0.5f;
            else
                b[i * m + j] = a[i * m + j] * 2.0f;
        }
}
int main(int argc, char **argv)
{
    int k = atoi(argv[1]), dim = atoi(argv[2]);
    double *sums = malloc(sizeof(double) * k * dim);
    int *counts = malloc(sizeof(int) * k);
    float *cent = malloc(sizeof(float) * k * dim), *b = malloc(sizeof(float) * k * dim);
    for (int i = 0; i < k * dim; i++) { sums[i] = (i * 37 % 101) / 7.0; cent[i] = -1.0f; }
    for (int c = 0; c < k; c++) counts[c] = c % 3;
    update(k, dim, sums, counts, cent);
    clip(k, dim, cent, b);
    double s = pos_sum(k * dim, sums);
    double t = 0; for (int i = 0; i < k * dim; i++) t += cent[i] * (i % 5 + 1) + b[i];
    printf("%.10g %.10g\n", s, t);
    return 0;
}
