/* A program that initialises MPI itself, after a computation: that computation runs whole on
 * every process (MPI is not initialised yet, and the program will do it), the later ones are
 * split over the ranks; the program finalises MPI. Every rank prints. */
#include <mpi.h>
#include <stdio.h>

#ifndef N
#define N 300007
#endif

static double a[N], b[N];

static double scaled_dot(int n)
{
    double s = 0.5;
    for (int i = 0; i < n; i++)
        b[i] = 2.0 * a[i] + 1.0;
    for (int i = 0; i < n; i++)
        s += b[i] * a[i];
    return s;
}

int main(int argc, char **argv)
{
    for (int i = 0; i < N; i++)
        a[i] = (double)(i % 17) - 8.0;
    MPI_Init(&argc, &argv);
    double s = scaled_dot(N);
    printf("%.17g %g %g\n", s, b[N - 1], b[N / 3]);
    MPI_Finalize();
    return 0;
}
