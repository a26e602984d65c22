/* Blur taps clamped at the image border through a two-iterator index (x + t), the way image
 * code writes them: the read row[x + t] is evaluated only where 0 <= x + t <= w - 1, so its
 * view needs no run-time precondition on the radius (it used to require r <= 0). */
#include <stdio.h>
#include <stdlib.h>

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

static void hblur(const unsigned char *src, float *dst, int w, int h, const float *k, int r)
{
    for (int y = 0; y < h; y++) {
        const unsigned char *row = src + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int t = -r; t <= r; t++)
                acc += k[t + r] * row[clampi(x + t, 0, w - 1)];
            dst[(size_t)y * w + x] = acc;
        }
    }
}

/* the same with the clamp written out, and a one-sided taper */
static void hsum_taper(const float *src, float *dst, int w, int h, int r)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float s = 0.0f;
            for (int t = 0; t <= r; t++)
                s += (x - t < 0) ? 0.0f : src[y * w + x - t] * (float)(t + 1);
            dst[y * w + x] = s;
        }
}

int main(void)
{
    static const int sizes[][3] = {{1, 1, 0}, {1, 3, 2}, {5, 4, 3}, {37, 11, 6}, {130, 70, 4}};
    for (int c = 0; c < 5; c++) {
        int w = sizes[c][0], h = sizes[c][1], r = sizes[c][2];
        unsigned char *src = malloc((size_t)w * h);
        float *f = malloc(sizeof(float) * w * h), *dst = malloc(sizeof(float) * w * h);
        float *k = malloc(sizeof(float) * (2 * r + 1));
        for (int i = 0; i < 2 * r + 1; i++)
            k[i] = 1.0f / (float)(2 * r + 1) + 0.01f * (float)i;
        for (int i = 0; i < w * h; i++) {
            src[i] = (unsigned char)((i * 37 + 11) & 255);
            f[i] = (float)(i % 13) - 6.0f;
        }
        hblur(src, dst, w, h, k, r);
        double s1 = 0.0;
        for (int i = 0; i < w * h; i++)
            s1 += dst[i] * (double)(i % 7 + 1);
        hsum_taper(f, dst, w, h, r);
        double s2 = 0.0;
        for (int i = 0; i < w * h; i++)
            s2 += dst[i] * (double)(i % 5 + 1);
        printf("%d %d %d: %.6e %.6e\n", w, h, r, s1, s2);
        free(src); free(f); free(dst); free(k);
    }
    return 0;
}
