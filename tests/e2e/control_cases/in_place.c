/* Conditions on the element a statement overwrites: a clamp with else-if, an in-place step that
   also accumulates, a 2-D clamp under an outer test, a clamped local before a store; and two nests that must stay sequential (a
   condition on the neighbour the loop wrote, a condition on another array the nest writes). */
#include <stdio.h>
#include <stdlib.h>
static void clamp(int n, float *a, float lo, float hi)
{
    for (int i = 0; i < n; i++) {
        if (a[i] > hi)
            a[i] = hi;
        else if (a[i] < lo)
            a[i] = lo;
    }
}
static void step(int n, double *x)
{
    for (int i = 0; i < n; i++)
        if (x[i] > 3.0) x[i] = x[i] * 0.5; else x[i] += 1.0;
}
static void band(int rows, int cols, float *m)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if (r % 2 == 0) {
                if (m[r * cols + c] < 0.0f) m[r * cols + c] = -m[r * cols + c];
                else if (m[r * cols + c] > 30.0f) m[r * cols + c] -= 30.0f;
            }
}
static void smear(int n, float *a)
{
    for (int i = 1; i < n; i++)
        if (a[i - 1] > a[i]) a[i] = a[i - 1] - 1.0f;
}
static void paired(int n, float *a, float *b)
{
    for (int i = 0; i < n; i++) {
        b[i] = a[i] * 2.0f;
        if (b[n - 1 - i] > 10.0f) a[i] = 10.0f; else a[i] = b[n - 1 - i];
    }
}
static void quantize(int n, const float *a, float s, signed char *q)
{
    for (int i = 0; i < n; i++) {
        float v = a[i] * s;
        if (v > 127.0f)
            v = 127.0f;
        else if (v < -127.0f)
            v = -127.0f;
        q[i] = (signed char)v;
    }
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), cols = atoi(argv[2]);
    int total = n * cols;
    float *a = malloc(sizeof(float) * total), *m = malloc(sizeof(float) * total), *b = malloc(sizeof(float) * total);
    double *x = malloc(sizeof(double) * total);
    signed char *q = malloc(total);
    for (int i = 0; i < total; i++) {
        a[i] = (float)((i * 37) % 101) - 50.0f;
        m[i] = (float)((i * 53) % 89) - 20.0f;
        x[i] = (double)((i * 11) % 13) * 0.75;
        b[i] = 0.0f;
    }
    clamp(total, a, -20.0f, 25.0f);
    step(total, x);
    band(n, cols, m);
    smear(total, m);
    paired(total, a, b);
    quantize(total, m, 9.5f, q);
    double s = 0;
    for (int i = 0; i < total; i++) s += a[i] * (i % 7 + 1) + m[i] * (i % 5 + 2) + x[i] + b[i] * 0.25 + q[i] * (i % 3);
    printf("%.10g\n", s);
    return 0;
}
