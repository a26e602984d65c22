/* Power spectrum of a long signal, the way a signal-processing tool writes it: a complex struct
 * with small helpers by value, a Hann window, an in-place iterative radix-2 FFT (bit-reversal
 * permutation, then butterfly stages over blocks of a run-time length), the power per bin, the
 * strongest bin and the energy per band.
 *
 *   ./fft_spectrum [log2_size] [rounds]   (default 18 2; the benchmark uses 22 3)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PI 3.14159265358979323846
#define BANDS 16

typedef struct { double re, im; } cpx;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline cpx c_add(cpx a, cpx b) { return (cpx){a.re + b.re, a.im + b.im}; }
static inline cpx c_sub(cpx a, cpx b) { return (cpx){a.re - b.re, a.im - b.im}; }
static inline cpx c_mul(cpx a, cpx b) { return (cpx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

static void window(cpx *x, const double *signal, int n)
{
    for (int i = 0; i < n; i++) {
        double w = 0.5 - 0.5 * cos(2.0 * PI * i / (n - 1));
        x[i] = (cpx){w * signal[i], 0.0};
    }
}

static void fft(cpx *a, int n)
{
    for (int i = 1, j = 0; i < n; i++) {      /* bit-reversal permutation */
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            cpx t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        int half = len / 2;
        double ang = -2.0 * PI / len;
        for (int i = 0; i < n; i += len) {
            for (int k = 0; k < half; k++) {
                cpx w = {cos(ang * k), sin(ang * k)};
                cpx u = a[i + k];
                cpx v = c_mul(a[i + k + half], w);
                a[i + k] = c_add(u, v);
                a[i + k + half] = c_sub(u, v);
            }
        }
    }
}

int main(int argc, char **argv)
{
    int logn = argc > 1 ? atoi(argv[1]) : 18, rounds = argc > 2 ? atoi(argv[2]) : 2;
    if (logn < 4 || logn > 26 || rounds < 1) {
        fprintf(stderr, "usage: %s [log2_size 4..26] [rounds>=1]\n", argv[0]);
        return 2;
    }
    int n = 1 << logn;
    double *signal = malloc(sizeof *signal * (size_t)n), *power = malloc(sizeof *power * (size_t)n);
    cpx *x = malloc(sizeof *x * (size_t)n);
    if (!signal || !power || !x) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        signal[i] = sin(2.0 * PI * 440.0 * i / 48000.0) + 0.5 * sin(2.0 * PI * 3000.0 * i / 48000.0)
                    + 0.01 * ((i * 7919) % 101 - 50);
    double t0 = now();
    double band[BANDS] = {0};
    int peak = 0;
    for (int r = 0; r < rounds; r++) {
        window(x, signal, n);
        fft(x, n);
        for (int i = 0; i < n; i++)
            power[i] = x[i].re * x[i].re + x[i].im * x[i].im;
        peak = 1;
        for (int i = 2; i < n / 2; i++)
            if (power[i] > power[peak])
                peak = i;
        for (int b = 0; b < BANDS; b++) {
            double e = 0.0;
            for (int i = b * (n / 2 / BANDS); i < (b + 1) * (n / 2 / BANDS); i++)
                e += power[i];
            band[b] = e;
        }
    }
    double t1 = now();
    double sum = 0.0, weighted = 0.0, abs_sum = 0.0;
    for (int b = 0; b < BANDS; b++) {
        sum += band[b];
        weighted += band[b] * (b + 1);
        abs_sum += fabs(band[b]);
    }
    printf("checksum bands %.10e %.10e %.10e\n", sum, weighted, abs_sum);
    printf("ichecksum peak %d\n", peak);
    printf("time_s %.6f\n", t1 - t0);
    free(signal);
    free(power);
    free(x);
    return 0;
}
