/* Implied volatilities of a book of European calls, the way pricing libraries write it: an array
 * of option structs, market prices from a smile, and per option a safeguarded Newton iteration
 * on the Black-Scholes price (vega as the slope) that falls back to bisection when a step leaves
 * the bracket, stops when the price error is below a tolerance, and records its iteration count.
 *
 *   ./implied_vol [scale] [rounds]   (default 1 3: 100000 options; the benchmark uses 8 4)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SQRT1_2 0.70710678118654752440
#define SQRT_2PI 2.50662827463100050242

typedef struct {
    double spot, strike, years, rate;
    double price;   /* market price */
    double vol;     /* implied volatility (output) */
    int iters;      /* iterations used (output) */
} Option;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double norm_cdf(double x) { return 0.5 * erfc(-x * SQRT1_2); }

static double bs_call(double s, double k, double t, double r, double v)
{
    double sq = v * sqrt(t);
    double d1 = (log(s / k) + (r + 0.5 * v * v) * t) / sq;
    return s * norm_cdf(d1) - k * exp(-r * t) * norm_cdf(d1 - sq);
}

static void implied_vols(Option *opt, int n, double tol, int max_iter)
{
    // BENCH-OMP: #pragma omp parallel for schedule(dynamic, 64)
    for (int i = 0; i < n; i++) {
        double s = opt[i].spot, k = opt[i].strike, t = opt[i].years, r = opt[i].rate;
        double target = opt[i].price;
        double lo = 1e-4, hi = 5.0, v = 0.3;
        int it = 0;
        while (it < max_iter) {
            double sq = v * sqrt(t);
            double d1 = (log(s / k) + (r + 0.5 * v * v) * t) / sq;
            double price = s * 0.5 * erfc(-d1 * SQRT1_2) - k * exp(-r * t) * 0.5 * erfc(-(d1 - sq) * SQRT1_2);
            double diff = price - target;
            it++;
            if (fabs(diff) < tol)
                break;
            if (diff > 0.0)
                hi = v;
            else
                lo = v;
            double vega = s * sqrt(t) * exp(-0.5 * d1 * d1) / SQRT_2PI;
            double next = vega > 1e-12 ? v - diff / vega : 0.5 * (lo + hi);
            v = (next <= lo || next >= hi) ? 0.5 * (lo + hi) : next;
        }
        opt[i].vol = v;
        opt[i].iters = it;
    }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (scale < 1 || rounds < 1) {
        fprintf(stderr, "usage: %s [scale>=1] [rounds>=1]\n", argv[0]);
        return 2;
    }
    int n = 100000 * scale;
    Option *opt = malloc(sizeof *opt * (size_t)n);
    if (!opt) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        opt[i].spot = 100.0;
        opt[i].strike = 60.0 + 80.0 * (double)(i % 997) / 996.0;
        opt[i].years = 0.1 + 2.9 * (double)(i % 89) / 88.0;
        opt[i].rate = 0.01 + 0.04 * (double)(i % 7) / 6.0;
        double m = log(opt[i].strike / opt[i].spot);
        double smile = 0.2 + 0.4 * m * m - 0.1 * m;   /* the volatility the prices come from */
        opt[i].price = bs_call(opt[i].spot, opt[i].strike, opt[i].years, opt[i].rate, smile);
        opt[i].vol = 0.0;
        opt[i].iters = 0;
    }
    double t0 = now();
    for (int r = 0; r < rounds; r++)
        implied_vols(opt, n, 1e-10, 100);
    double t1 = now();
    double sum = 0.0, weighted = 0.0, abs_sum = 0.0;
    long iters = 0;
    for (int i = 0; i < n; i++) {
        sum += opt[i].vol;
        weighted += opt[i].vol * (double)(i % 13 + 1);
        abs_sum += fabs(opt[i].vol);
        iters += opt[i].iters;
    }
    printf("checksum vol %.10e %.10e %.10e\n", sum, weighted, abs_sum);
    printf("ichecksum iterations %ld\n", iters);
    printf("time_s %.6f\n", t1 - t0);
    free(opt);
    return 0;
}
