/* main.c: build an image, blur it, print column sums and a few pixels. */
#include <math.h>
#include <stdio.h>

#include "blur.h"

static float img[ROWS][COLS], out[ROWS][COLS];
static float s[COLS];

int main(void)
{
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            img[i][j] = sinf(0.1f * (float)i) * cosf(0.07f * (float)j) - 0.25f;
    blur(img, out);
    column_sums(out, s);
    for (int j = 0; j < COLS; j++)
        printf("%.9g\n", s[j]);
    for (int i = 0; i < ROWS; i += 17)
        printf("%.9g\n", out[i][i % COLS]);
    return 0;
}
