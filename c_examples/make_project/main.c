/* main.c: set up inputs, call the kernels, print the results. */
#include <stdio.h>

#include "kernels.h"

static float A[N][N], B[N][N], C[N][N];
static float r[N];

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = (float)((i * 13 + j * 7) % 23 - 11) / 16.0f;
            B[i][j] = (float)((i * 5 + j * 17) % 19 - 9) / 8.0f;
        }
    matmul(A, B, C);
    row_sums(C, r);
    for (int i = 0; i < N; i++)
        printf("%.9g\n", r[i]);
    printf("%.9g\n", C[N - 1][N - 1]);
    return 0;
}
