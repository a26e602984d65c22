/* A gather through a pointer beside a written global, inside a sequential loop that becomes a
 * parallel region: the only run-time check is the inspected one (no precondition, no other
 * range). One call points the pointer at the global itself: that call runs as written. */
#include <stdio.h>
#include <stdlib.h>

static float g[64];

static void smooth(int steps, const float *src)
{
    for (int k = 0; k < steps; k++)
        for (int i = 0; i < 64; i++)
            g[i] = 0.5f * g[i] + src[(i * 7 + k) % 64];
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 5;
    float *src = malloc(sizeof(float) * 64);
    for (int i = 0; i < 64; i++) { src[i] = (float)(i % 9) * 0.25f; g[i] = (float)(i % 5); }
    smooth(steps, src);
    double s = 0.0;
    for (int i = 0; i < 64; i++) s += g[i] * (i % 3 + 1);
    smooth(steps, g);   /* gathers what it writes: in order */
    double t = 0.0;
    for (int i = 0; i < 64; i++) t += g[i] * (i % 3 + 1);
    printf("%.6e %.6e\n", s, t);
    free(src);
    return 0;
}
