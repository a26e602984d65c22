/* intsum.c: integer row sums r[i] = sum_j A[i][j], exact whatever the summation order. */
#include <stdio.h>

#ifndef N
#define N 800
#endif
#ifndef M
#define M 600
#endif

static int A[N][M];
static int r[N];

static unsigned lcg_state = 17u;

/* Next pseudo-random integer in [-1000, 1000]. */
static int next_int(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (int)((lcg_state >> 8) % 2001u) - 1000;
}

static void row_sums(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            r[i] += A[i][j];
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = next_int();
    for (int i = 0; i < N; i++)
        r[i] = 0;

    row_sums();

#ifdef PRINT_CHECKSUM
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += r[i];
    printf("%ld\n", sum);
#else
    for (int i = 0; i < N; i++)
        printf("%d\n", r[i]);
#endif
    return 0;
}
