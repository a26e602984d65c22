/* CSR row loops whose inner loop (bounds read from memory) writes the row's own element: a
 * sparse product accumulated straight into y[r], a diagonal extraction d[r] = v[p] where
 * ci[p] == r, and a row scaling into out[r*2 + 1]. Each row loop runs in parallel around its body
 * as written; a call whose output is also its input (y == x) runs as written (the gathers'
 * inspection finds x's elements inside what the loop writes). */
#include <stdio.h>
#include <stdlib.h>

typedef struct { int n; int *rp, *ci; double *v; } Csr;

static void spmv(const Csr *A, const double *x, double *y)
{
    for (int r = 0; r < A->n; r++) {
        y[r] = 0.0;
        for (int p = A->rp[r]; p < A->rp[r + 1]; p++)
            y[r] += A->v[p] * x[A->ci[p]];
    }
}

static void diagonal(const Csr *A, double *d)
{
    for (int r = 0; r < A->n; r++) {
        d[r] = 1.0;
        for (int p = A->rp[r]; p < A->rp[r + 1]; p++)
            if (A->ci[p] == r)
                d[r] = A->v[p];
    }
}

static void row_extremes(const Csr *A, double *out)
{
    for (int r = 0; r < A->n; r++) {
        out[r * 2] = 0.0;
        out[r * 2 + 1] = 0.0;
        for (int p = A->rp[r]; p < A->rp[r + 1]; p++) {
            if (A->v[p] < out[r * 2]) out[r * 2] = A->v[p];
            if (A->v[p] > out[r * 2 + 1]) out[r * 2 + 1] = A->v[p];
        }
    }
}

int main(void)
{
    for (int n = 1; n <= 2000; n = n * 7 + 3) {
        Csr A;
        A.n = n;
        A.rp = malloc(sizeof(int) * (n + 1));
        A.ci = malloc(sizeof(int) * (n * 5 + 1));
        A.v = malloc(sizeof(double) * (n * 5 + 1));
        double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *d = malloc(sizeof(double) * n);
        double *ex = malloc(sizeof(double) * 2 * n);
        int nz = 0;
        for (int r = 0; r < n; r++) {
            A.rp[r] = nz;
            for (int k = 0; k < 5; k++) {
                int c = (r * 3 + k * k * 11) % n;
                if (k > 0 && (r + k) % 3 == 0) continue;
                A.ci[nz] = k == 2 ? r : c;
                A.v[nz] = (double)((r * 7 + k * 5) % 13) / 4.0 - 1.5;
                nz++;
            }
            x[r] = (double)(r % 9) / 8.0;
        }
        A.rp[n] = nz;
        spmv(&A, x, y);
        diagonal(&A, d);
        row_extremes(&A, ex);
        double s = 0.0;
        for (int r = 0; r < n; r++) s += (y[r] + 2.0 * d[r] + 3.0 * ex[2 * r] + 5.0 * ex[2 * r + 1]) * (r % 11 + 1);
        spmv(&A, y, y);   /* in place: overlapping, runs as written */
        double t = 0.0;
        for (int r = 0; r < n; r++) t += y[r] * (r % 5 + 1);
        printf("n=%d nz=%d %.9e %.9e\n", n, nz, s, t);
        free(A.rp); free(A.ci); free(A.v); free(x); free(y); free(d); free(ex);
    }
    return 0;
}
