/* image_gaussian_sobel.c - separable gaussian blur (clamp-to-edge taps through a helper), luma,
 * Sobel edge magnitude and histogram equalisation of a synthetic RGB image held in a struct.
 *   usage: ./image_gaussian_sobel [scale>=1] [passes>=1]   (image 256*scale x 192*scale)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

struct image {
    int w, h, c;
    unsigned char *px;
};

#define PIX(im, x, y, ch) ((im)->px[((size_t)(y) * (im)->w + (x)) * (im)->c + (ch)])

static struct image *image_new(int w, int h, int c)
{
    struct image *im = malloc(sizeof *im);
    im->w = w; im->h = h; im->c = c;
    im->px = calloc((size_t)w * h * c, 1);
    return im;
}

static void image_free(struct image *im)
{
    free(im->px);
    free(im);
}

static inline unsigned char sat_u8(float v)
{
    return v < 0.0f ? 0 : (v > 255.0f ? 255 : (unsigned char)(v + 0.5f));
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

static int make_kernel(float *k, float sigma)
{
    int r = (int)ceilf(3.0f * sigma);
    float s = 0.0f;
    for (int i = -r; i <= r; i++) {
        k[i + r] = expf(-(float)(i * i) / (2.0f * sigma * sigma));
        s += k[i + r];
    }
    for (int i = 0; i < 2 * r + 1; i++) k[i] /= s;
    return r;
}

/* separable gaussian, horizontal then vertical, clamp-to-edge */
static void gaussian_blur(const struct image *src, struct image *dst, float *tmp,
                          const float *k, int r)
{
    const int w = src->w, h = src->h, nc = src->c;
    // BENCH-OMP: #pragma omp parallel for
    for (int y = 0; y < h; y++) {
        const unsigned char *row = src->px + (size_t)y * w * nc;
        float *trow = tmp + (size_t)y * w * nc;
        for (int x = 0; x < w; x++) {
            for (int ch = 0; ch < nc; ch++) {
                float acc = 0.0f;
                for (int t = -r; t <= r; t++) {
                    int xx = clampi(x + t, 0, w - 1);
                    acc += k[t + r] * row[xx * nc + ch];
                }
                trow[x * nc + ch] = acc;
            }
        }
    }
    // BENCH-OMP: #pragma omp parallel for
    for (int y = 0; y < h; y++) {
        unsigned char *drow = dst->px + (size_t)y * w * nc;
        for (int x = 0; x < w; x++) {
            for (int ch = 0; ch < nc; ch++) {
                float acc = 0.0f;
                for (int t = -r; t <= r; t++) {
                    int yy = clampi(y + t, 0, h - 1);
                    acc += k[t + r] * tmp[((size_t)yy * w + x) * nc + ch];
                }
                drow[x * nc + ch] = sat_u8(acc);
            }
        }
    }
}

/* luminance into a single channel image */
static void to_gray(const struct image *src, struct image *gray)
{
    int n = src->w * src->h;
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
        const unsigned char *p = src->px + (size_t)i * src->c;
        float l = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
        gray->px[i] = sat_u8(l);
    }
}

/* sobel gradient magnitude, border pixels set to 0 */
static void sobel(const struct image *g, struct image *out)
{
    const int w = g->w, h = g->h;
    const unsigned char *in = g->px;
    memset(out->px, 0, (size_t)w * h);
    // BENCH-OMP: #pragma omp parallel for
    for (int y = 1; y < h - 1; y++) {
        for (int x = 1; x < w - 1; x++) {
            int c = y * w + x;
            int gx = -in[c - w - 1] + in[c - w + 1]
                     - 2 * in[c - 1] + 2 * in[c + 1]
                     - in[c + w - 1] + in[c + w + 1];
            int gy = -in[c - w - 1] - 2 * in[c - w] - in[c - w + 1]
                     + in[c + w - 1] + 2 * in[c + w] + in[c + w + 1];
            float mag = sqrtf((float)(gx * gx + gy * gy));
            out->px[c] = sat_u8(mag);
        }
    }
}

static void equalize(struct image *g, unsigned int *hist)
{
    int n = g->w * g->h;
    unsigned char lut[256];
    memset(hist, 0, 256 * sizeof *hist);
    for (int i = 0; i < n; i++)
        hist[g->px[i]]++;
    unsigned int cdf = 0, cdf_min = 0;
    for (int v = 0; v < 256; v++) {
        cdf += hist[v];
        if (cdf_min == 0 && cdf > 0) cdf_min = cdf;
        if (n - cdf_min == 0)
            lut[v] = (unsigned char)v;
        else
            lut[v] = sat_u8(255.0f * (float)(cdf - cdf_min) / (float)(n - cdf_min));
    }
    for (int i = 0; i < n; i++)
        g->px[i] = lut[g->px[i]];
}

static void ichecksum(const char *name, const unsigned char *px, size_t n)
{
    unsigned long long s = 0;   /* position-weighted: a moved or changed pixel changes it */
    for (size_t i = 0; i < n; i++)
        s += (unsigned long long)px[i] * (i % 13 + 1);
    printf("ichecksum %s %llu\n", name, s);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int passes = argc > 2 ? atoi(argv[2]) : 2;
    if (scale < 1 || passes < 1) {
        fprintf(stderr, "usage: %s [scale>=1] [passes>=1]\n", argv[0]);
        return 2;
    }
    int w = 256 * scale, h = 192 * scale;
    struct image *img = image_new(w, h, 3);
    struct image *blur = image_new(w, h, 3);
    struct image *gray = image_new(w, h, 1);
    struct image *edges = image_new(w, h, 1);
    float *tmp = malloc(sizeof(float) * (size_t)w * h * 3);
    unsigned int hist[256];
    float kern[64];
    if (!img->px || !blur->px || !gray->px || !edges->px || !tmp) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }

    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            PIX(img, x, y, 0) = (unsigned char)((x * 7 + y * 3) & 0xff);
            PIX(img, x, y, 1) = (unsigned char)(((x ^ y) * 5) & 0xff);
            PIX(img, x, y, 2) = (unsigned char)(128 + (int)(100.0f * sinf(0.01f * x) * cosf(0.013f * y)));
        }

    int r = make_kernel(kern, 2.0f);
    double t0 = now_s();
    for (int p = 0; p < passes; p++) {
        gaussian_blur(img, blur, tmp, kern, r);
        struct image *t = img; img = blur; blur = t;
    }
    to_gray(img, gray);
    sobel(gray, edges);
    ichecksum("edges", edges->px, (size_t)w * h);
    equalize(edges, hist);
    double t1 = now_s();

    ichecksum("blurred", img->px, (size_t)w * h * 3);
    ichecksum("gray", gray->px, (size_t)w * h);
    ichecksum("equalized", edges->px, (size_t)w * h);
    printf("ichecksum hist0 %u\nichecksum hist255 %u\n", hist[0], hist[255]);
    printf("time_s %.6f\n", t1 - t0);

    image_free(img); image_free(blur); image_free(gray); image_free(edges);
    free(tmp);
    return 0;
}
