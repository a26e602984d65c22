/* European option pricing (Black-Scholes) over an array of structs: per option the d1/d2
 * terms, the normal CDF through erfc, call and put prices and the delta written back into the
 * struct, then the book's total value and the largest call price.
 *
 *   ./black_scholes [scale] [rounds]     (default 1 4: 65536 options; the benchmark uses 16 8)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    float spot, strike, years, rate, vol;   /* inputs */
    float call, put, delta;                 /* outputs */
} Option;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float cnd(float d)
{
    return 0.5f * erfcf(-d * 0.70710678f);
}

static void price_all(Option *opt, int n)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int i = 0; i < n; i++) {
        float sqrt_t = sqrtf(opt[i].years);
        float d1 = (logf(opt[i].spot / opt[i].strike) + (opt[i].rate + 0.5f * opt[i].vol * opt[i].vol) * opt[i].years)
                   / (opt[i].vol * sqrt_t);
        float d2 = d1 - opt[i].vol * sqrt_t;
        float disc = expf(-opt[i].rate * opt[i].years);
        opt[i].call = opt[i].spot * cnd(d1) - opt[i].strike * disc * cnd(d2);
        opt[i].put = opt[i].strike * disc * cnd(-d2) - opt[i].spot * cnd(-d1);
        opt[i].delta = cnd(d1);
    }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 4;
    int n;
    Option *book;
    uint32_t state = 1234u;
    double total = 0.0, sc = 0.0, sp = 0.0, sd = 0.0, t0, t1;
    float max_call = 0.0f;

    if (scale < 1 || rounds < 1) { fprintf(stderr, "usage: %s [scale>=1] [rounds>=1]\n", argv[0]); return 2; }
    n = 65536 * scale;
    book = malloc((size_t)n * sizeof *book);
    if (!book) { fprintf(stderr, "out of memory\n"); return 1; }
    for (int i = 0; i < n; i++) {
        float r[5];
        for (int k = 0; k < 5; k++) {
            state = state * 1664525u + 1013904223u;
            r[k] = (float)(state >> 8) / 16777216.0f;
        }
        book[i].spot = 50.0f + 100.0f * r[0];
        book[i].strike = 50.0f + 100.0f * r[1];
        book[i].years = 0.25f + 2.0f * r[2];
        book[i].rate = 0.01f + 0.05f * r[3];
        book[i].vol = 0.1f + 0.4f * r[4];
        book[i].call = book[i].put = book[i].delta = 0.0f;
    }

    t0 = now();
    for (int round = 0; round < rounds; round++) {
        price_all(book, n);
        for (int i = 0; i < n; i++)          /* the market moves between rounds */
            book[i].spot *= 1.0f + 0.001f * (float)((i + round) % 5 - 2);
    }
    for (int i = 0; i < n; i++) {
        total += book[i].call + book[i].put;
        if (book[i].call > max_call)
            max_call = book[i].call;
    }
    t1 = now();

    for (int i = 0; i < n; i++) {
        sc += book[i].call * (double)(i % 13 + 1);
        sp += book[i].put * (double)(i % 13 + 1);
        sd += book[i].delta * (double)(i % 13 + 1);
    }
    printf("checksum calls %.10e %.10e %.10e\n", sc, sc, fabs(sc));
    printf("checksum puts %.10e %.10e %.10e\n", sp, sp, fabs(sp));
    printf("checksum deltas %.10e %.10e %.10e\n", sd, sd, fabs(sd));
    printf("checksum total %.10e %.10e %.10e\n", total, total, fabs(total));
    printf("checksum max_call %.10e %.10e %.10e\n", (double)max_call, (double)max_call, (double)max_call);
    printf("time_s %.6f\n", t1 - t0);
    free(book);
    return 0;
}
