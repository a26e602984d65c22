/* Gathers of declared arrays beside written arrays: distinct objects never overlap, and a written
   pointer is checked at run time against the whole gathered array (here it is that array itself
   in one call: the loop then runs as written). */
#include <stdio.h>
#include <stdlib.h>
#define N 5000
static double gx[N], gy[N];
static int idx[N];
static void permute_objects(int n)
{
    for (int i = 0; i < n; i++)
        gy[i] = gx[idx[i]] * 2.0 + i;
}
static void permute_into(int n, double *out)
{
    for (int i = 0; i < n; i++)
        out[i] = gx[idx[i]] + 0.5;
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), aliased = atoi(argv[2]);
    double *buf = malloc(sizeof(double) * N);
    for (int i = 0; i < N; i++) { gx[i] = (i * 37 % 101) / 7.0; idx[i] = (i * 7919) % N; buf[i] = 0; }
    permute_objects(n);
    permute_into(n, aliased ? gx : buf);   /* aliased: writes the array it gathers from */
    double s = 0;
    for (int i = 0; i < N; i++) s += (gy[i] + buf[i] + gx[i]) * (i % 5 + 1);
    printf("%.9g\n", s);
    return 0;
}
