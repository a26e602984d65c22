/* jacobi2d.c: one Jacobi 2-D (5-point) step from A into B over the interior.
 *
 * Boundary elements of B keep their initial value (zero).  Inputs come from a closed
 * formula, so the initialisation nest is itself parallelizable. */
#include <stdio.h>

#ifndef N
#define N 50
#endif
#ifndef M
#define M 60
#endif

static float A[N][M];
static float B[N][M];

static void jacobi2d(void)
{
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < M - 1; j++)
            B[i][j] = 0.2f * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = (float)((i * 37 + j * 11) % 29 - 14) / 8.0f;

    jacobi2d();

#ifdef PRINT_CHECKSUM
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum += B[i][j];
    printf("%.9g\n", sum);
#else
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            printf("%.9g\n", B[i][j]);
#endif
    return 0;
}
