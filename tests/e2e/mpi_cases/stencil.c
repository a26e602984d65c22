/* A 5-point stencil over time steps (two computations inside a sequential host loop) and a
 * multi-channel convolution (MCC), split over MPI ranks. Integer data: exact. */
#include <stdio.h>

#ifndef N
#define N 401
#endif
#ifndef STEPS
#define STEPS 6
#endif
/* MCC sizes: batch, output rows/cols, output channels, input channels, kernel rows/cols */
#ifndef HO
#define HO 29
#endif
#define NB 2
#define K 5
#define C 3
#define KR 3
#define KS 3

static int u[N][N], v[N][N];
static int in[NB][HO + KR - 1][HO + KS - 1][C], w[K][KR][KS][C], out[NB][HO][HO][K];

static void steps(void)
{
    for (int t = 0; t < STEPS; t++) {
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                v[i][j] = (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 3 * u[i][j]) % 1000;
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                u[i][j] = v[i][j] + t;
    }
}

static void mcc(void)
{
    for (int n = 0; n < NB; n++)
        for (int p = 0; p < HO; p++)
            for (int q = 0; q < HO; q++)
                for (int k = 0; k < K; k++) {
                    out[n][p][q][k] = 0;
                    for (int r = 0; r < KR; r++)
                        for (int s = 0; s < KS; s++)
                            for (int c = 0; c < C; c++)
                                out[n][p][q][k] += in[n][p + r][q + s][c] * w[k][r][s][c];
                }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            u[i][j] = (i * 31 + j * 17) % 97;
    for (int n = 0; n < NB; n++)
        for (int h = 0; h < HO + KR - 1; h++)
            for (int x = 0; x < HO + KS - 1; x++)
                for (int c = 0; c < C; c++)
                    in[n][h][x][c] = (n + 3 * h + 5 * x + 7 * c) % 13 - 6;
    for (int k = 0; k < K; k++)
        for (int r = 0; r < KR; r++)
            for (int s = 0; s < KS; s++)
                for (int c = 0; c < C; c++)
                    w[k][r][s][c] = (k + r * s + c) % 5 - 2;
    steps();
    mcc();
    long sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sum += (long)u[i][j] * (i + 2 * j + 1);
    for (int n = 0; n < NB; n++)
        for (int p = 0; p < HO; p++)
            for (int q = 0; q < HO; q++)
                for (int k = 0; k < K; k++)
                    sum += (long)out[n][p][q][k] * (n + p + 3 * q + 7 * k + 1);
    printf("%ld %d %d\n", sum, u[N / 2][N / 3], out[1][HO - 1][HO / 2][K - 1]);
    return 0;
}
