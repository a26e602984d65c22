/* Reductions split over MPI ranks: start values (init and accumulate) counted once, max/min, xor,
 * a run-time extent smaller than the number of ranks. Integer-valued data: exact in any order. */
#include <stdio.h>

#ifndef N
#define N 1009
#endif

static int a[N], b[N];
static float x[N];
static unsigned u[N];

static int dot_init(int n)
{
    int s = 7;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static long total;

/* total += a . b: the old value of total counted once */
static void dot_acc(int n)
{
    for (int i = 0; i < n; i++)
        total += (long)a[i] * b[i];
}

static float fmax_of(int n)
{
    float m = -1000.0f;
    for (int i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

static int imin_of(int n)
{
    int m = 5;
    for (int i = 0; i < n; i++)
        m = a[i] < m ? a[i] : m;
    return m;
}

static unsigned xor_of(int n)
{
    unsigned h = 0x5au;
    for (int i = 0; i < n; i++)
        h ^= u[i];
    return h;
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        a[i] = (i * 37) % 23 - 11;
        b[i] = (i * 11) % 17 - 8;
        x[i] = (float)((i * 53) % 101 - 50);
        u[i] = (unsigned)i * 2654435761u;
    }
    total = 100;
    dot_acc(N);
    printf("%d %ld %g %d %u\n", dot_init(N), total, fmax_of(N), imin_of(N), xor_of(N));
    /* fewer points than ranks, and none at all */
    for (int n = 0; n < 4; n++) {
        total = -3;
        dot_acc(n);
        printf("%d %d %ld %g %d %u\n", n, dot_init(n), total, fmax_of(n), imin_of(n), xor_of(n));
    }
    return 0;
}
