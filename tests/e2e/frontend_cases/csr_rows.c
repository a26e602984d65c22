/* Sparse rows in CSR form: the row loop runs in parallel around inner loops whose bounds are read
   from the row pointers. The last calls overlap the written vector with what the rows read (the
   vector x, the values of the matrix): the run-time checks must run the nests as written. */
#include <stdio.h>
#include <stdlib.h>

typedef struct { int n; int *rp; int *ci; double *v; } csr;

void spmv(const csr *A, const double *x, double *y) {
  for (int r = 0; r < A->n; r++) {
    double sum = 0.0;
    for (int p = A->rp[r]; p < A->rp[r + 1]; p++)
      sum += A->v[p] * x[A->ci[p]];
    y[r] = sum;
  }
}

void jacobi(const csr *A, const double *x, const double *b, double *xnew) {
  int p;
  for (int r = 0; r < A->n; r++) {
    double s = 0.0, diag = 1.0;
    int start = A->rp[r], end = A->rp[r + 1];
    for (p = start; p < end; p++) {
      if (A->ci[p] == r) diag = A->v[p]; else s += A->v[p] * x[A->ci[p]];
    }
    xnew[r] = (b[r] - s) / diag;
  }
}

#define G 150
#define N (G * G)

static void laplacian(csr *A, double *vals) {
  int k = 0;
  A->n = N;
  A->rp = malloc((N + 1) * sizeof(int));
  A->ci = malloc(5 * N * sizeof(int));
  A->v = vals;
  for (int i = 0; i < G; i++)
    for (int j = 0; j < G; j++) {
      int r = i * G + j;
      A->rp[r] = k;
      if (i > 0) { A->ci[k] = r - G; A->v[k++] = -0.1; }
      if (j > 0) { A->ci[k] = r - 1; A->v[k++] = -0.1; }
      A->ci[k] = r; A->v[k++] = 0.4 + (r % 3) * 0.1;
      if (j < G - 1) { A->ci[k] = r + 1; A->v[k++] = -0.1; }
      if (i < G - 1) { A->ci[k] = r + G; A->v[k++] = -0.1; }
    }
  A->rp[N] = k;
}

static void show(const char *what, const double *y, int n) {
  double s = 0.0;
  for (int k = 0; k < n; k++) s += y[k] * (1.0 + (k % 7));
  printf("%s %.9g %.9g %.9g\n", what, s, y[0], y[n / 2]);
}

int main(void) {
  csr A;
  double *vals = malloc((5 * N + N) * sizeof(double));
  double *x = malloc(2 * N * sizeof(double)), *y = malloc(N * sizeof(double));
  double *b = malloc(N * sizeof(double));
  laplacian(&A, vals);
  for (int k = 0; k < 2 * N; k++) x[k] = 1.0 + (k % 13) * 0.125;
  for (int k = 0; k < N; k++) b[k] = (k % 5) - 2.0;
  spmv(&A, x, y);
  show("spmv", y, N);
  for (int it = 0; it < 3; it++) {
    jacobi(&A, x, b, y);
    jacobi(&A, y, b, x);
  }
  show("jacobi", x, N);
  /* y overlaps x: row r writes what later rows read */
  for (int k = 0; k < 2 * N; k++) x[k] = 1.0 + (k % 13) * 0.125;
  spmv(&A, x, x + 7);
  show("spmv-x", x, 2 * N);
  /* y overlaps the matrix's values (their tail, past the nonzeros, and the last rows' values) */
  double *tail = vals + A.rp[N] - 40;
  spmv(&A, x, tail);
  show("spmv-v", vals, 5 * N);
  /* xnew overlaps b, read at the row written: the same iteration reads it first */
  jacobi(&A, x, y, y);
  show("jacobi-b", y, N);
  return 0;
}
