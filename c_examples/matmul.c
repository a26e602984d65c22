/* matmul.c: single-precision matrix multiplication C = A * B (sgemm, no alpha/beta).
 *
 * The common imperfect form: C[i][j] is zeroed inside the (i, j) loops, then
 * accumulated over k. */
#include <stdio.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif
#ifndef K
#define K 60
#endif

static float A[M][K];
static float B[K][N];
static float C[M][N];

static unsigned lcg_state = 2024u;

/* Next pseudo-random value in [-1, 1), a multiple of 2^-15 (exact in float). */
static float next_value(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (float)((lcg_state >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}

static void matmul(void)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            C[i][j] = 0.0f;
            for (int k = 0; k < K; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
}

int main(void)
{
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            A[i][k] = next_value();
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            B[k][j] = next_value();

    matmul();

#ifdef PRINT_CHECKSUM
    double sum = 0.0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            sum += C[i][j];
    printf("%.9g\n", sum);
#else
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            printf("%.9g\n", C[i][j]);
#endif
    return 0;
}
