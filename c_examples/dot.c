/* dot.c: double-precision dot product s = x . y, reduced into a scalar. */
#include <stdio.h>

#ifndef N
#define N 100000
#endif

static double x[N];
static double y[N];

static unsigned lcg_state = 99u;

/* Next pseudo-random value in [-1, 1), a multiple of 2^-15. */
static double next_value(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (double)((lcg_state >> 8) & 0xFFFFu) / 32768.0 - 1.0;
}

static double dot(void)
{
    double s = 0.0;
    for (int i = 0; i < N; i++)
        s += x[i] * y[i];
    return s;
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        x[i] = next_value();
        y[i] = next_value();
    }

    double s = dot();

    printf("%.17g\n", s);
    return 0;
}
