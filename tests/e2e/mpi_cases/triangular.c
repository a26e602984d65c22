/* A triangular concatenation and a triangular reduction over the rows, split over MPI ranks;
 * the row iterator is declared before the nests (its exit value is printed). Integer data. */
#include <stdio.h>
#define N 600
static int L[N][N], x[N], y[N];
static void tri(int n)
{
    int i;
    for (i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            L[i][j] = x[i] * 3 - x[j] + i;
    printf("exit %d\n", i);
}
static void lowsum(int n)
{
    int i;
    for (i = 2; i < n; i++) {
        y[i] = 1;
        for (int k = 0; k < i; k++)
            y[i] += L[i][k] * x[k];
    }
    printf("exit %d\n", i);
}
int main(void)
{
    for (int i = 0; i < N; i++) { x[i] = i % 13 - 6; y[i] = -1; }
    tri(N);
    lowsum(N);
    tri(3);
    long s = 0;
    for (int i = 0; i < N; i++) { s += y[i] * (i + 1); for (int j = 0; j < N; j++) s += (long)L[i][j] * (j + 2); }
    printf("%ld\n", s);
    return 0;
}
