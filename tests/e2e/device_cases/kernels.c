/* Computations split over devices (--devices): matrix multiplication (output rows copied back
 * per device), matrix-vector product, a dot product (nothing to concatenate: the reduction
 * dimension is split and the partial sums combined on the host), a transposed store (packed
 * gather) and a multi-channel convolution (MCC). Sizes are odd primes, and each computation is
 * also called with run-time extents of 1 and 0 (fewer rows than devices). Integer data: exact in
 * any order. */
#include <stdio.h>

#define P 37
#define Q 41
#define R 43
#define L 10007

static int A[P][R], B[R][Q], C[P][Q], T[Q][P];
static long x[R], y[P];
static double u[L], v[L];

static void matmul(int m)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < Q; j++) {
            C[i][j] = 0;
            for (int k = 0; k < R; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
}

static void matvec(int m)
{
    for (int i = 0; i < m; i++) {
        y[i] = 3;
        for (int k = 0; k < R; k++)
            y[i] += A[i][k] * x[k];
    }
}

static double dot(int n)
{
    double s = 0.5;
    for (int k = 0; k < n; k++)
        s += u[k] * v[k];
    return s;
}

static void transpose(int m)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < Q; j++)
            T[j][i] = C[i][j] - i + 2 * j;
}

/* inputs read at rows other than the split iterator's: reversed, and two strided reads (each
   device copies in only the rows of its block, computed from the subscripts) */
static long rev[P], shift[P], x2[2 * P + 3];

static void reversed(int m)
{
    for (int i = 0; i < m; i++) {
        rev[i] = 0;
        for (int j = 0; j < Q; j++)
            rev[i] += A[m - 1 - i][j] * (j + 1);
    }
}

static void strided_reads(int m)
{
    for (int i = 0; i < m; i++)
        shift[i] = x2[2 * i + 3] * 5 - x2[i + 1];
}

/* a batch of one: the split dimension p is the second subscript, each device's rows of it are
   one contiguous block, copied back directly */
static int o1[1][P][Q];

static void batch_one(int m)
{
    for (int n = 0; n < 1; n++)
        for (int p = 0; p < m; p++)
            for (int q = 0; q < Q; q++)
                o1[n][p][q] = A[p][q] * 2 + B[q][p] - n;
}

/* MCC: out[n][p][q][k] = sum over c, r, s of in[n][p + r][q + s][c] * w[k][r][s][c] */
#define NB 2
#define OP 9
#define OQ 7
#define OK 5
#define CH 3
#define FR 3
#define FS 2
static int in[NB][OP + FR - 1][OQ + FS - 1][CH], w[OK][FR][FS][CH], out[NB][OP][OQ][OK];

static void mcc(void)
{
    for (int n = 0; n < NB; n++)
        for (int p = 0; p < OP; p++)
            for (int q = 0; q < OQ; q++)
                for (int k = 0; k < OK; k++) {
                    out[n][p][q][k] = 0;
                    for (int c = 0; c < CH; c++)
                        for (int r = 0; r < FR; r++)
                            for (int s = 0; s < FS; s++)
                                out[n][p][q][k] += in[n][p + r][q + s][c] * w[k][r][s][c];
                }
}

static long checksum(void)
{
    long sum = 0;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < Q; j++)
            sum += (long)C[i][j] * (i + 1) + (long)T[j][i] * (j + 3);
    for (int i = 0; i < P; i++)
        sum += y[i] * (i + 7) + rev[i] * (i + 2) + shift[i] * (i + 5);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < Q; j++)
            sum += (long)o1[0][i][j] * (2 * i + j + 1);
    for (int n = 0; n < NB; n++)
        for (int p = 0; p < OP; p++)
            for (int q = 0; q < OQ; q++)
                for (int k = 0; k < OK; k++)
                    sum += (long)out[n][p][q][k] * (n + p + 2 * q + 3 * k + 1);
    return sum;
}

int main(void)
{
    for (int i = 0; i < P; i++)
        for (int k = 0; k < R; k++)
            A[i][k] = (i * 7 + k * 3) % 11 - 5;
    for (int k = 0; k < R; k++) {
        x[k] = k % 5 - 2;
        for (int j = 0; j < Q; j++)
            B[k][j] = (k * 5 + j) % 9 - 4;
    }
    for (int k = 0; k < L; k++) {
        u[k] = k % 7 - 3;
        v[k] = k % 5 - 1;
    }
    for (int i = 0; i < 2 * P + 3; i++)
        x2[i] = (i * 13) % 17 - 8;
    for (int n = 0; n < NB; n++)
        for (int p = 0; p < OP + FR - 1; p++)
            for (int q = 0; q < OQ + FS - 1; q++)
                for (int c = 0; c < CH; c++)
                    in[n][p][q][c] = (n + 2 * p + 3 * q + c) % 7 - 3;
    for (int k = 0; k < OK; k++)
        for (int r = 0; r < FR; r++)
            for (int s = 0; s < FS; s++)
                for (int c = 0; c < CH; c++)
                    w[k][r][s][c] = (k + r * 2 + s + c * 3) % 5 - 2;
    matmul(P);
    matvec(P);
    transpose(P);
    reversed(P);
    strided_reads(P);
    batch_one(P);
    mcc();
    printf("%ld %.1f\n", checksum(), dot(L));
    for (int m = 1; m >= 0; m--) {   /* extent 1 (fewer rows than devices), then none */
        matmul(m);
        matvec(m);
        transpose(m);
        reversed(m);
        strided_reads(m);
        batch_one(m);
        printf("%ld %.1f %.1f\n", checksum(), dot(m), dot(L - m));
    }
    for (int i = 0; i < P; i += 6)
        printf("%d %d %ld\n", C[i][i % Q], T[i % Q][i], y[i]);
    return 0;
}
