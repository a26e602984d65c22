/* Concatenations split over MPI ranks: outputs gathered as whole rows (matmul), through a
 * packed buffer (a transposed store, a strided store), with run-time extents smaller than the
 * number of ranks; a reduction split when the concatenation is too short (3 rows), with a
 * finishing expression. Sizes are primes; integer-valued data, exact in any order. */
#include <stdio.h>

#ifndef P
#define P 61
#endif
#ifndef Q
#define Q 67
#endif
#ifndef R
#define R 71
#endif

static float A[P][R], B[R][Q], C[P][Q];
static int T[Q][P];
static int S[2 * P + 1];
#ifndef L
#define L 50021
#endif
static float V[3][L], W[L];
static float y[3];

static void matmul(void)
{
    for (int i = 0; i < P; i++)
        for (int j = 0; j < Q; j++) {
            C[i][j] = 0.0f;
            for (int k = 0; k < R; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
}

static void transpose(int n, int m)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            T[j][i] = i - j;
            for (int k = 0; k < R; k++)
                T[j][i] += (int)A[i][k] * (int)B[k][j];
        }
}

static void strided(int n)
{
    for (int i = 0; i < n; i++)
        S[2 * i + 1] = i * i - 5;
}

static void rows(int n, int m, float out[][Q])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            out[i][j] = A[i][j] + 2.0f * B[j][i];
}

static void short_rows(void)
{
    for (int i = 0; i < 3; i++) {
        float s = 1.0f;
        for (int k = 0; k < L; k++)
            s += V[i][k] * W[k];
        y[i] = 0.5f * s - 2.0f;
    }
}

int main(void)
{
    static float out[P][Q];
    for (int i = 0; i < P; i++)
        for (int k = 0; k < R; k++)
            A[i][k] = (float)((i * 7 + k * 3) % 11 - 5);
    for (int k = 0; k < R; k++)
        for (int j = 0; j < Q; j++)
            B[k][j] = (float)((k * 5 + j) % 9 - 4);
    for (int k = 0; k < L; k++) {
        W[k] = (float)(k % 7 - 3);
        for (int i = 0; i < 3; i++)
            V[i][k] = (float)((k + i) % 5 - 2);
    }
    matmul();
    transpose(P, Q);
    strided(P);
    short_rows();
    for (int n = 0; n < 4; n++) {   /* fewer rows than ranks, and none */
        rows(n, Q, out);
        strided(n);
    }
    double sum = 0.0;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < Q; j++)
            sum += C[i][j] * (i + 1) + T[j][i] * (j + 2) + out[i][j];
    for (int i = 0; i < 2 * P + 1; i++)
        sum += S[i] * (i + 3);
    printf("%.17g %g %g %g\n", sum, y[0], y[1], y[2]);
    for (int i = 0; i < P; i += 5)
        printf("%g %d %g\n", C[i][i % Q], T[i % Q][i], out[i % 4][i % Q]);
    return 0;
}
