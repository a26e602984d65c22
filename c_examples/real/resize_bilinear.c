/* Image resampling as a graphics library writes it: a bilinear upscale of an interleaved
 * float image (source coordinates from the pixel centre, clamped, weights per pixel), then a
 * 2x2 box downscale back and the difference with the original (PSNR-style error).
 *
 *   ./resize_bilinear [scale]      (default 1: 320x240x3 -> x1.75; the benchmark uses 12)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int w, h, c;
    float *px;      /* px[(y*w + x)*c + ch] */
} FImage;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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

static void image_alloc(FImage *im, int w, int h, int c)
{
    im->w = w;
    im->h = h;
    im->c = c;
    im->px = malloc((size_t)w * h * c * sizeof(float));
    if (!im->px) { fprintf(stderr, "out of memory\n"); exit(1); }
}

static void resize_bilinear(const FImage *src, FImage *dst)
{
    const float sx = (float)src->w / dst->w, sy = (float)src->h / dst->h;
    // BENCH-OMP: #pragma omp parallel for
    for (int y = 0; y < dst->h; y++) {
        float fy = (y + 0.5f) * sy - 0.5f;
        if (fy < 0.0f)
            fy = 0.0f;
        int y0 = (int)fy;
        int y1 = y0 + 1 < src->h ? y0 + 1 : src->h - 1;
        float wy = fy - y0;
        for (int x = 0; x < dst->w; x++) {
            float fx = (x + 0.5f) * sx - 0.5f;
            if (fx < 0.0f)
                fx = 0.0f;
            int x0 = (int)fx;
            int x1 = x0 + 1 < src->w ? x0 + 1 : src->w - 1;
            float wx = fx - x0;
            for (int ch = 0; ch < src->c; ch++) {
                float a = src->px[(y0 * src->w + x0) * src->c + ch];
                float b = src->px[(y0 * src->w + x1) * src->c + ch];
                float c = src->px[(y1 * src->w + x0) * src->c + ch];
                float d = src->px[(y1 * src->w + x1) * src->c + ch];
                float top = a + (b - a) * wx, bottom = c + (d - c) * wx;
                dst->px[(y * dst->w + x) * dst->c + ch] = top + (bottom - top) * wy;
            }
        }
    }
}

static void downscale2(const FImage *src, FImage *dst)
{
    int c = src->c;
    // BENCH-OMP: #pragma omp parallel for
    for (int y = 0; y < dst->h; y++)
        for (int x = 0; x < dst->w; x++)
            for (int ch = 0; ch < c; ch++)
                dst->px[(y * dst->w + x) * c + ch] =
                    0.25f * (src->px[((2 * y) * src->w + 2 * x) * c + ch] + src->px[((2 * y) * src->w + 2 * x + 1) * c + ch]
                             + src->px[((2 * y + 1) * src->w + 2 * x) * c + ch]
                             + src->px[((2 * y + 1) * src->w + 2 * x + 1) * c + ch]);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    FImage src, up, down;
    double err = 0.0, t0, t1;

    if (scale < 1) { fprintf(stderr, "usage: %s [scale>=1]\n", argv[0]); return 2; }
    image_alloc(&src, 320 * scale, 240 * scale, 3);
    image_alloc(&up, src.w * 7 / 4, src.h * 7 / 4, 3);
    image_alloc(&down, up.w / 2, up.h / 2, 3);
    for (int y = 0; y < src.h; y++)
        for (int x = 0; x < src.w; x++)
            for (int ch = 0; ch < src.c; ch++)
                src.px[(y * src.w + x) * src.c + ch] =
                    0.5f + 0.5f * sinf(0.05f * x * (ch + 1)) * cosf(0.031f * y + ch);

    t0 = now();
    resize_bilinear(&src, &up);
    downscale2(&up, &down);
    /* compare with the source resampled to the small size */
    {
        FImage ref;
        image_alloc(&ref, down.w, down.h, down.c);
        resize_bilinear(&src, &ref);
        for (long i = 0; i < (long)down.w * down.h * down.c; i++) {
            double d = (double)down.px[i] - ref.px[i];
            err += d * d;
        }
        err /= (double)down.w * down.h * down.c;
        free(ref.px);
    }
    t1 = now();

    checksum("up", up.px, (long)up.w * up.h * up.c);
    checksum("down", down.px, (long)down.w * down.h * down.c);
    printf("checksum mse %.10e %.10e %.10e\n", err, err, err);
    printf("time_s %.6f\n", t1 - t0);
    free(src.px); free(up.px); free(down.px);
    return 0;
}
