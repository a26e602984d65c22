/* Helpers of several statements called in nests: a slope limiter with an early return, an int
 * clamp with two, a xorshift hash of compound assignments (unsigned long long), a squared
 * distance through pointer parameters in a reduction, and conversions at the calls: int
 * arguments to double parameters, a double argument to an int parameter, an unsigned result
 * of int arithmetic, a float result, reads of a global table and of a pointer parameter behind
 * the guards that keep them in bounds, and a helper that passes its pointer on. */
#include <math.h>
#include <stdio.h>

#define N 600

static const double weights[3] = {0.25, 0.5, 0.25};

static inline double minmod(double a, double b) {
    if (a * b <= 0.0) return 0.0;
    return copysign(fmin(fabs(a), fabs(b)), a);
}
static inline int clampi(int v, int lo, int hi) { if (v < lo) return lo; if (v > hi) return hi; return v; }
static inline double sq_dist(const double *p, const double *q) { double dx = p[0]-q[0]; double dy = p[1]-q[1]; return dx*dx + dy*dy; }
static inline unsigned long long xorshift64(unsigned long long x) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; }
static unsigned mix(int a) { unsigned h = a; h *= 2654435761u; h ^= h >> 15; return h; }
static float shrink(double v, int k) {
    double t = v;
    if (k > 2) {
        double s = 0.5;
        t *= s;
    } else
        t -= 1.0;
    if (k < 0) return 0.0f;
    else { float r = t; return r + k; }
}
static double weight(int k) { if (k < 0 || k > 2) return 0.0; return weights[k]; }
static double before(const double *p, int k) { if (k <= 0) return -1.0; return p[k - 1]; }
static double near_origin(const double *p) { double d = sq_dist(p, p + 2); return d < 4.0 ? d : 4.0; }

static double u[N], slope[N], img[N], blur[N], pts[2 * N], lim[N], wsum[N];
static int ku[N], bins[N];
static unsigned long long hash[N];
static unsigned mixed[N];
static float small[N];

static void limiter(int n) {
    for (int i = 1; i < n - 1; i++)
        slope[i] = minmod(u[i] - u[i - 1], u[i + 1] - u[i]);
}

static void int_limiter(int n) {  /* int arguments to double parameters */
    for (int i = 1; i < n - 1; i++)
        lim[i] = minmod(ku[i] - ku[i - 1], ku[i + 1] - ku[i]) + 0.5 * i;
}

static void blur_rows(int n) {
    for (int i = 0; i < n; i++)
        blur[i] = 0.25 * img[clampi(i - 1, 0, n - 1)] + 0.5 * img[i] + 0.25 * img[clampi(i + 1, 0, n - 1)];
}

static void binning(int n) {  /* a double argument to an int parameter: truncated */
    for (int i = 0; i < n; i++)
        bins[i] = clampi(u[i] * 7.9, -3, 3) + 10 * clampi(i / 3, 5, 150);
}

static void hashes(int n) {
    for (int i = 0; i < n; i++) {
        hash[i] = xorshift64((unsigned long long)i * 0x9E3779B97F4A7C15ull + 1);
        mixed[i] = mix(i - 300);
    }
}

static void shrinks(int n) {
    for (int i = 0; i < n; i++) {
        small[i] = shrink(u[i], i % 5 - 1);
        wsum[i] = weight(i - 300) * u[i] + near_origin(&pts[2 * i]) + before(u, i);
    }
}

static double spread(int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += sq_dist(&pts[2 * i], pts);
    return s;
}

int main(void) {
    for (int i = 0; i < N; i++) {
        u[i] = sin(0.05 * i) + 0.3 * cos(0.31 * i);
        ku[i] = (i * 37) % 23 - 11;
        img[i] = (i * 37) % 101;
    }
    for (int i = 0; i < 2 * N; i++) pts[i] = (i * 7) % 13 - 6;
    limiter(N); int_limiter(N); blur_rows(N); binning(N); hashes(N); shrinks(N - 2);
    double s = spread(N), a = 0, b = 0, c = 0;
    unsigned long long x = 0;
    long m = 0;
    for (int i = 0; i < N; i++) {
        a += slope[i] * (i % 7 + 1) + lim[i];
        b += blur[i] * (i % 5 + 1) + small[i] + wsum[i];
        c += bins[i] * (i % 3 + 1);
        x ^= hash[i] * (unsigned long long)(i + 1);
        m += mixed[i] % 1000;
    }
    printf("%.9e %.9e %.9e %.9e %llu %ld\n", a, b, c, s, x, m);
    return 0;
}
