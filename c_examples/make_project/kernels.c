/* kernels.c: the hot loop nests (what mdpoly-cc should parallelize). */
#include "kernels.h"

void matmul(const float A[N][N], const float B[N][N], float C[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            C[i][j] = 0.0f;
            for (int k = 0; k < N; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
}

void row_sums(const float C[N][N], float r[N])
{
    for (int i = 0; i < N; i++) {
        r[i] = 0.0f;
        for (int j = 0; j < N; j++)
            r[i] += C[i][j];
    }
}
