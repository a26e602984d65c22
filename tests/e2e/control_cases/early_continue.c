/* Early continue: a Sobel filter that zeroes the border and skips to the next pixel, and a
   masked loop that skips unselected elements (with a sum over the selected ones). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
static void sobel(int h, int w, const unsigned char *gray, int *mag)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (y == 0 || y == h - 1 || x == 0 || x == w - 1) {
                mag[y * w + x] = 0;
                continue;
            }
            int gx = -gray[(y - 1) * w + x - 1] + gray[(y - 1) * w + x + 1]
                     - 2 * gray[y * w + x - 1] + 2 * gray[y * w + x + 1];
            int gy = -gray[(y - 1) * w + x] + gray[(y + 1) * w + x];
            mag[y * w + x] = abs(gx) + abs(gy);
        }
}
static double masked(int n, const int *mask, const double *a, double *b)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        if (mask[i] == 0)
            continue;
        b[i] = sqrt(a[i]) + 1.0;
        s += a[i];
    }
    return s;
}
int main(int argc, char **argv)
{
    int h = atoi(argv[1]), w = atoi(argv[2]);
    unsigned char *g = malloc(h * w);
    int *mag = malloc(sizeof(int) * h * w), *mask = malloc(sizeof(int) * h * w);
    double *a = malloc(sizeof(double) * h * w), *b = malloc(sizeof(double) * h * w);
    for (int i = 0; i < h * w; i++) { g[i] = (unsigned char)(i * 31 % 251); mask[i] = i % 3; a[i] = i % 17; b[i] = -1; mag[i] = 7; }
    sobel(h, w, g, mag);
    double s = masked(h * w, mask, a, b);
    long t = 0; double u = 0;
    for (int i = 0; i < h * w; i++) { t += (long)mag[i] * (i % 7 + 1); u += b[i]; }
    printf("%ld %.10g %.10g\n", t, s, u);
    return 0;
}
