/* An image filter pipeline on a flat interleaved RGB image: unpack to planar float channels,
 * separable 5-tap Gaussian blur with clamped borders, unsharp mask, integer luma, integer Sobel
 * edge magnitude and an edge count.
 *
 *   ./image_pipeline [scale]        (default 1: 640x480; the benchmark uses 6)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int width, height, channels;
    unsigned char *data;   /* interleaved, row-major: data[(y*width + x)*channels + c] */
} Image;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

static void checksum(const char *name, const float *x, long n)
{
    double s = 0.0, w = 0.0, a = 0.0;
    long i;
    for (i = 0; i < n; i++) {
        s += x[i];
        w += x[i] * (double)(i % 13 + 1);
        a += fabs(x[i]);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

static void ichecksum(const char *name, const int32_t *x, long n)
{
    long long s = 0;
    long i;
    for (i = 0; i < n; i++)
        s += (long long)x[i] * (i % 7 + 1);
    printf("ichecksum %s %lld\n", name, s);
}

static void make_test_image(Image *img)
{
    uint32_t state = 12345u;
    int x, y, c;
    for (y = 0; y < img->height; y++)
        for (x = 0; x < img->width; x++)
            for (c = 0; c < img->channels; c++) {
                state = state * 1103515245u + 12345u;
                int noise = (int)((state >> 16) % 32u);
                int base = ((x / 16 + y / 16) % 2) * 160 + (x * (c + 1) + y) % 64;
                img->data[(y * img->width + x) * img->channels + c] = (unsigned char)(base + noise);
            }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    Image img;
    int w, h, nc, x, y, c;
    float *planes, *tmp, *blur, *sharp;
    int32_t *gray, *mag;
    long edges = 0;
    const float k0 = 1.0f / 16.0f, k1 = 4.0f / 16.0f, k2 = 6.0f / 16.0f;
    const int threshold = 200;
    double t0, t1;

    if (scale < 1) { fprintf(stderr, "usage: %s [scale>=1]\n", argv[0]); return 2; }
    img.width = 640 * scale;
    img.height = 480 * scale;
    img.channels = 3;
    w = img.width;
    h = img.height;
    nc = img.channels;
    img.data = xmalloc((size_t)w * h * nc);
    make_test_image(&img);
    planes = xmalloc((size_t)w * h * nc * sizeof(float));
    tmp = xmalloc((size_t)w * h * nc * sizeof(float));
    blur = xmalloc((size_t)w * h * nc * sizeof(float));
    sharp = xmalloc((size_t)w * h * nc * sizeof(float));
    gray = xmalloc((size_t)w * h * sizeof(int32_t));
    mag = xmalloc((size_t)w * h * sizeof(int32_t));

    t0 = now();
    /* unpack: interleaved bytes -> planar floats in [0, 1] */
    // BENCH-OMP: #pragma omp parallel for private(x, y)
    for (c = 0; c < nc; c++)
        for (y = 0; y < h; y++)
            for (x = 0; x < w; x++)
                planes[(c * h + y) * w + x] = img.data[(y * w + x) * nc + c] / 255.0f;

    /* horizontal pass, borders clamped */
    // BENCH-OMP: #pragma omp parallel for private(x, c)
    for (y = 0; y < h; y++)
        for (c = 0; c < nc; c++)
            for (x = 0; x < w; x++) {
                int row = (c * h + y) * w;
                int xm2 = x < 2 ? 0 : x - 2;
                int xm1 = x < 1 ? 0 : x - 1;
                int xp1 = x + 1 >= w ? w - 1 : x + 1;
                int xp2 = x + 2 >= w ? w - 1 : x + 2;
                tmp[row + x] = k0 * planes[row + xm2] + k1 * planes[row + xm1] + k2 * planes[row + x]
                             + k1 * planes[row + xp1] + k0 * planes[row + xp2];
            }

    /* vertical pass */
    // BENCH-OMP: #pragma omp parallel for private(x, c)
    for (y = 0; y < h; y++) {
        int ym2 = y < 2 ? 0 : y - 2;
        int ym1 = y < 1 ? 0 : y - 1;
        int yp1 = y + 1 >= h ? h - 1 : y + 1;
        int yp2 = y + 2 >= h ? h - 1 : y + 2;
        for (c = 0; c < nc; c++)
            for (x = 0; x < w; x++)
                blur[(c * h + y) * w + x] = k0 * tmp[(c * h + ym2) * w + x] + k1 * tmp[(c * h + ym1) * w + x]
                                          + k2 * tmp[(c * h + y) * w + x] + k1 * tmp[(c * h + yp1) * w + x]
                                          + k0 * tmp[(c * h + yp2) * w + x];
    }

    /* unsharp mask, clamped to [0, 1] */
    // BENCH-OMP: #pragma omp parallel for
    for (long i = 0; i < (long)w * h * nc; i++) {
        float v = planes[i] + 0.75f * (planes[i] - blur[i]);
        sharp[i] = fminf(1.0f, fmaxf(0.0f, v));
    }

    /* integer luma (BT.601 weights in 8.8 fixed point) */
    // BENCH-OMP: #pragma omp parallel for private(x, c)
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            const unsigned char *px = img.data + (y * w + x) * nc;
            gray[y * w + x] = (77 * px[0] + 150 * px[1] + 29 * px[2]) >> 8;
        }

    /* Sobel L1 magnitude over the interior, zero on the border */
    // BENCH-OMP: #pragma omp parallel for private(x, c)
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            if (y == 0 || y == h - 1 || x == 0 || x == w - 1) {
                mag[y * w + x] = 0;
                continue;
            }
            int gx = -gray[(y - 1) * w + x - 1] + gray[(y - 1) * w + x + 1]
                     - 2 * gray[y * w + x - 1] + 2 * gray[y * w + x + 1]
                     - gray[(y + 1) * w + x - 1] + gray[(y + 1) * w + x + 1];
            int gy = -gray[(y - 1) * w + x - 1] - 2 * gray[(y - 1) * w + x] - gray[(y - 1) * w + x + 1]
                     + gray[(y + 1) * w + x - 1] + 2 * gray[(y + 1) * w + x] + gray[(y + 1) * w + x + 1];
            mag[y * w + x] = abs(gx) + abs(gy);
        }

    // BENCH-OMP: #pragma omp parallel for reduction(+:edges)
    for (long i = 0; i < (long)w * h; i++)
        edges += mag[i] > threshold;
    t1 = now();

    checksum("blur", blur, (long)w * h * nc);
    checksum("sharp", sharp, (long)w * h * nc);
    ichecksum("gray", gray, (long)w * h);
    ichecksum("sobel", mag, (long)w * h);
    printf("ichecksum edges %ld\n", edges);
    printf("time_s %.6f\n", t1 - t0);
    free(img.data); free(planes); free(tmp); free(blur); free(sharp); free(gray); free(mag);
    return 0;
}
