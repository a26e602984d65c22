/* kernels.h: sizes and the hot loop nests of the make_project example. */
#ifndef KERNELS_H
#define KERNELS_H

#ifndef N
#define N 96
#endif

/* C = A * B for N x N single-precision matrices. */
void matmul(const float A[N][N], const float B[N][N], float C[N][N]);

/* Row sums of C into r. */
void row_sums(const float C[N][N], float r[N]);

#endif
