/* saxpy_scalar.c: y = alpha * x + y with alpha a scalar function parameter. */
#include <stdio.h>

#ifndef N
#define N 2000
#endif

static float x[N];
static float y[N];

static void saxpy(float alpha)
{
    for (int i = 0; i < N; i++)
        y[i] = alpha * x[i] + y[i];
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 17 - 8) / 4.0f;
        y[i] = (float)(i % 13 - 6) * 0.375f;
    }

    float alpha = 2.5f;
    saxpy(alpha);

#ifdef PRINT_CHECKSUM
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += y[i];
    printf("%.9g\n", sum);
#else
    for (int i = 0; i < N; i++)
        printf("%.9g\n", y[i]);
#endif
    return 0;
}
