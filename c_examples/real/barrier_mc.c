/* Monte-Carlo pricing of barrier and Asian options under geometric Brownian motion, in the
 * style of a quant library's reference pricer: a per-path xorshift generator and Box-Muller
 * normals written into a path buffer, then per path a knock-out flag set inside the time loop,
 * a running average and the payoffs accumulated into the book's totals. The first-passage time
 * of each path is kept for a histogram-free statistic (its mean over the knocked-out paths).
 *
 *   ./barrier_mc [scale] [steps]   (default 1 64: 20000 paths; the benchmark uses 12 128)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    float spot, strike, barrier, rate, vol, maturity;
} Contract;

typedef struct {
    double up_out, asian, vanilla, knocked, first_passage;
} Book;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t xorshift32(uint32_t x)
{
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* standard normals, two per Box-Muller pair; each path has its own stream */
static void normals(int npaths, int nsteps, float *z)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int p = 0; p < npaths; p++) {
        uint32_t s = 2463534242u ^ (uint32_t)(p * 2654435761u);
        for (int t = 0; t + 1 < nsteps; t += 2) {
            s = xorshift32(s);
            float u1 = ((float)(s >> 8) + 0.5f) / 16777216.0f;
            s = xorshift32(s);
            float u2 = ((float)(s >> 8) + 0.5f) / 16777216.0f;
            float r = sqrtf(-2.0f * logf(u1));
            z[(long)p * nsteps + t] = r * cosf(6.2831853f * u2);
            z[(long)p * nsteps + t + 1] = r * sinf(6.2831853f * u2);
        }
    }
}

static void price(const Contract *c, int npaths, int nsteps, const float *z, Book *book)
{
    const float dt = c->maturity / nsteps;
    const float drift = (c->rate - 0.5f * c->vol * c->vol) * dt;
    const float diffusion = c->vol * sqrtf(dt);
    double up_out = 0.0, asian = 0.0, vanilla = 0.0, knocked = 0.0, passage = 0.0;
    // BENCH-OMP: #pragma omp parallel for reduction(+:up_out, asian, vanilla, knocked, passage)
    for (int p = 0; p < npaths; p++) {
        float s = c->spot;
        float avg = 0.0f;
        int hit = 0, first = nsteps;
        for (int t = 0; t < nsteps; t++) {
            s *= expf(drift + diffusion * z[(long)p * nsteps + t]);
            avg += s;
            if (s >= c->barrier && !hit) {
                hit = 1;
                first = t;
            }
        }
        avg /= nsteps;
        float call = s > c->strike ? s - c->strike : 0.0f;
        vanilla += call;
        if (!hit)
            up_out += call;
        else {
            knocked += 1.0;
            passage += first;
        }
        asian += avg > c->strike ? avg - c->strike : 0.0f;
    }
    const double disc = exp(-(double)c->rate * c->maturity) / npaths;
    book->up_out = up_out * disc;
    book->asian = asian * disc;
    book->vanilla = vanilla * disc;
    book->knocked = knocked;
    book->first_passage = knocked > 0.0 ? passage / knocked : 0.0;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int nsteps = argc > 2 ? atoi(argv[2]) : 64;
    if (scale < 1 || nsteps < 2) { fprintf(stderr, "usage: %s [scale>=1] [steps>=2]\n", argv[0]); return 2; }
    int npaths = 20000 * scale;
    float *z = malloc(sizeof(float) * (size_t)npaths * nsteps);
    if (!z) { fprintf(stderr, "out of memory\n"); return 1; }
    Contract book_contracts[3] = {
        {100.0f, 100.0f, 130.0f, 0.03f, 0.20f, 1.0f},
        {100.0f, 95.0f, 115.0f, 0.01f, 0.35f, 0.5f},
        {50.0f, 55.0f, 60.0f, 0.05f, 0.25f, 2.0f},
    };
    Book books[3];
    double t0 = now();
    normals(npaths, nsteps, z);
    for (int k = 0; k < 3; k++)
        price(&book_contracts[k], npaths, nsteps, z, &books[k]);
    double t1 = now();
    for (int k = 0; k < 3; k++)
        printf("checksum contract%d %.10e %.10e %.10e\n", k, books[k].up_out, books[k].asian, books[k].vanilla);
    printf("checksum knocked %ld\n", (long)(books[0].knocked + 10.0 * books[1].knocked + 100.0 * books[2].knocked));
    printf("checksum passage %.10e %.10e %.10e\n", books[0].first_passage, books[1].first_passage, books[2].first_passage);
    printf("time_s %.6f\n", t1 - t0);
    free(z);
    return 0;
}
