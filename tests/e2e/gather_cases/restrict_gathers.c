/* Gathers through pointers beside a written pointer: with 'restrict' on the written pointer the
 * row loop runs in parallel (no other pointer may reach what it modifies), without it the loop
 * runs as written (the gathered elements may be the written ones). */
#include <stdio.h>
#include <stdlib.h>

static void gather(int n, int m, const int *idx, const float *src, float *restrict dst)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int k = 0; k < m; k++)
            s += src[idx[i * m + k]] * (float)(k + 1);
        dst[i] = s;
    }
}

static void gather_may_alias(int n, int m, const int *idx, const float *src, float *dst)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int k = 0; k < m; k++)
            s += src[idx[i * m + k]] * (float)(k + 1);
        dst[i] = s;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, m = argc > 2 ? atoi(argv[2]) : 8;
    int *idx = malloc(sizeof(int) * (size_t)n * m);
    float *src = malloc(sizeof(float) * n), *dst = malloc(sizeof(float) * n);
    for (int i = 0; i < n; i++) src[i] = (float)(i % 97) * 0.25f;
    for (long i = 0; i < (long)n * m; i++) idx[i] = (int)((i * 7919L) % n);
    gather(n, m, idx, src, dst);
    double s = 0.0;
    for (int i = 0; i < n; i++) s += dst[i] * (i % 7 + 1);
    gather_may_alias(n, m, idx, src, src);   /* reads what it writes: must run in order */
    double t = 0.0;
    for (int i = 0; i < n; i++) t += src[i] * (i % 5 + 1);
    printf("%.6e %.6e\n", s, t);
    free(idx); free(src); free(dst);
    return 0;
}
