/* Gathers through pointers beside a written pointer without 'restrict': the generated code first
 * runs the nest's index computations alone (the inspector), finds the elements each gather reads
 * and checks them against what the nest writes; each function is also called with its output
 * inside what it gathers, where the nest must run as written. */
#include <stdio.h>
#include <stdlib.h>

#define Q 5
static const int cx[Q] = {0, 1, 0, -1, 0};
static const int cy[Q] = {0, 0, 1, 0, -1};
static const int opp[Q] = {0, 3, 4, 1, 2};

typedef struct { int w, h, c; float *px; } Image;

/* pull streaming on a periodic grid: wrapped neighbours, a local array per cell */
static void stream(int nx, int ny, const float *fin, float *fout, const unsigned char *wall)
{
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            int c = y * nx + x;
            float f[Q];
            for (int q = 0; q < Q; q++) {
                int xs = x - cx[q], ys = y - cy[q];
                xs = xs < 0 ? xs + nx : (xs >= nx ? xs - nx : xs);
                ys = ys < 0 ? ys + ny : (ys >= ny ? ys - ny : ys);
                f[q] = fin[(ys * nx + xs) * Q + q];
            }
            if (wall[c]) {
                for (int q = 0; q < Q; q++)
                    fout[c * Q + q] = f[opp[q]];
            } else {
                float rho = 0.0f;
                for (int q = 0; q < Q; q++)
                    rho += f[q];
                for (int q = 0; q < Q; q++)
                    fout[c * Q + q] = 0.5f * f[q] + 0.1f * rho;
            }
        }
}

/* nearest-neighbour resample with clamped, data-independent source coordinates */
static void resample(const Image *src, Image *dst)
{
    const float sx = (float)src->w / dst->w, sy = (float)src->h / dst->h;
    for (int y = 0; y < dst->h; y++) {
        int y0 = (int)(y * sy);
        if (y0 > src->h - 1)
            y0 = src->h - 1;
        for (int x = 0; x < dst->w; x++) {
            int x0 = (int)(x * sx);
            x0 = x0 < src->w - 1 ? x0 : src->w - 1;
            for (int ch = 0; ch < dst->c; ch++)
                dst->px[(y * dst->w + x) * dst->c + ch] = 2.0f * src->px[(y0 * src->w + x0) * src->c + ch] + 1.0f;
        }
    }
}

/* an index array read where the model locates it: its values are inspected too */
static void gather(int n, int m, const int *idx, const float *src, float *dst)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int k = 0; k < m; k++)
            s += src[idx[i * m + k]] * (float)(k + 1);
        dst[i] = s;
    }
}

/* a gather of a gather: its subscript reads an element no located read names (inspected too) */
static void gather2(int n, const int *perm, const int *idx, const float *src, float *dst)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[idx[perm[i]]] + 1.0f;
}

static double sum(const float *a, long n)
{
    double s = 0.0;
    for (long i = 0; i < n; i++)
        s += a[i] * (double)(i % 7 + 1);
    return s;
}

int main(int argc, char **argv)
{
    int nx = argc > 1 ? atoi(argv[1]) : 64, ny = argc > 2 ? atoi(argv[2]) : 48;
    long cells = (long)nx * ny;
    float *f0 = malloc(sizeof(float) * cells * Q), *f1 = malloc(sizeof(float) * cells * Q);
    unsigned char *wall = malloc(cells);
    for (long i = 0; i < cells * Q; i++) f0[i] = (float)((i * 37) % 101) / 101.0f;
    for (long i = 0; i < cells; i++) wall[i] = (i % 11) == 0;
    stream(nx, ny, f0, f1, wall);
    printf("stream %.6e\n", sum(f1, cells * Q));
    stream(nx, ny, f1, f1, wall);                  /* in place: runs as written */
    printf("stream in place %.6e\n", sum(f1, cells * Q));

    Image src = {nx, ny, 3, malloc(sizeof(float) * cells * 3)};
    Image dst = {nx * 2 - 1, ny + 3, 3, malloc(sizeof(float) * (nx * 2 - 1) * (ny + 3) * 3)};
    for (long i = 0; i < cells * 3; i++) src.px[i] = (float)(i % 89) * 0.5f;
    resample(&src, &dst);
    printf("resample %.6e\n", sum(dst.px, (long)dst.w * dst.h * dst.c));
    Image half = {nx / 2, ny, 3, src.px + 3};   /* writes inside what it reads */
    if (nx >= 2)
        resample(&src, &half);
    printf("resample overlap %.6e\n", sum(src.px, cells * 3));

    int n = nx * ny, m = 4;
    int *idx = malloc(sizeof(int) * n * m), *perm = malloc(sizeof(int) * n);
    float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
    for (long i = 0; i < (long)n * m; i++) idx[i] = (int)((i * 7919L) % n);
    for (int i = 0; i < n; i++) { a[i] = (float)(i % 13); perm[i] = (int)((i * 31L) % n); }
    gather(n, m, idx, a, b);
    printf("gather %.6e\n", sum(b, n));
    gather(n, m, idx, a, a);                        /* reads what it writes: in order */
    printf("gather in place %.6e\n", sum(a, n));
    gather2(n, perm, idx, a, b);
    printf("gather2 %.6e\n", sum(b, n));
    free(f0); free(f1); free(wall); free(src.px); free(dst.px); free(idx); free(perm); free(a); free(b);
    return 0;
}
