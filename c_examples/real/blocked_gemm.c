/* A hand-blocked single-precision GEMM as people write it before reaching for a BLAS:
 * C = alpha * A * B + beta * C on row-major flat buffers with leading dimensions, cache blocks
 * whose last block is cut with a MIN macro, restrict pointers, then the Frobenius norm of C.
 *
 *   ./blocked_gemm [scale]       (default 1: 192x160x176; the benchmark uses 6)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BS 64
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void checksum(const char *name, const float *x, long n)
{
    double s = 0.0, w = 0.0, a = 0.0;
    long i;
    for (i = 0; i < n; i++) {
        s += x[i];
        w += x[i] * (double)(i % 13 + 1);
        a += fabs(x[i]);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

static float *random_matrix(long n, uint32_t seed)
{
    float *p = malloc(n * sizeof *p);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (long i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
    return p;
}

static void sgemm(int M, int N, int K, float alpha, const float *restrict A, int lda,
                  const float *restrict B, int ldb, float beta, float *restrict C, int ldc)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            C[i * ldc + j] *= beta;
    // BENCH-OMP: #pragma omp parallel for
    for (int ii = 0; ii < M; ii += BS)
        for (int kk = 0; kk < K; kk += BS)
            for (int jj = 0; jj < N; jj += BS)
                for (int i = ii; i < MIN(ii + BS, M); i++)
                    for (int k = kk; k < MIN(kk + BS, K); k++) {
                        float a = alpha * A[i * lda + k];
                        for (int j = jj; j < MIN(jj + BS, N); j++)
                            C[i * ldc + j] += a * B[k * ldb + j];
                    }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int M, N, K, lda, ldb, ldc;
    float *A, *B, *C;
    double norm = 0.0, t0, t1;

    if (scale < 1) { fprintf(stderr, "usage: %s [scale>=1]\n", argv[0]); return 2; }
    M = 192 * scale;
    N = 160 * scale;
    K = 176 * scale;
    lda = K + 4;            /* padded rows, as a submatrix of a larger one */
    ldb = N + 8;
    ldc = N;
    A = random_matrix((long)M * lda, 1u);
    B = random_matrix((long)K * ldb, 2u);
    C = random_matrix((long)M * ldc, 3u);

    t0 = now();
    sgemm(M, N, K, 1.5f, A, lda, B, ldb, 0.5f, C, ldc);
    // BENCH-OMP: #pragma omp parallel for reduction(+:norm)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            norm += (double)C[i * ldc + j] * C[i * ldc + j];
    norm = sqrt(norm);
    t1 = now();

    checksum("C", C, (long)M * ldc);
    printf("checksum norm %.10e %.10e %.10e\n", norm, norm, norm);
    printf("time_s %.6f\n", t1 - t0);
    free(A); free(B); free(C);
    return 0;
}
