/* Arrays of structs: option pricing writing three members (through a pure helper, cnd), an n-body step over particles whose
 * positions and velocities are members, a member array behind a struct pointer, and loops whose
 * bound is a widened product of sizes ((long)w * h * nc, ((long) c.rows) * c.cols). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    float spot, strike, years, rate, vol;
    float call, put, delta;
} Option;

typedef struct { float x, y, vx, vy, m; } Particle;

typedef struct { int n; Particle *parts; float dt; } System;

typedef struct { int rows, cols; } Shape;
static float cnd(float d) { return 0.5f * erfcf(-d * 0.70710678f); }
static void price(Option *opt, int n) {
    for (int i = 0; i < n; i++) {
        float sqrt_t = sqrtf(opt[i].years);
        float d1 = (logf(opt[i].spot / opt[i].strike) + (opt[i].rate + 0.5f * opt[i].vol * opt[i].vol) * opt[i].years)
                   / (opt[i].vol * sqrt_t);
        float d2 = d1 - opt[i].vol * sqrt_t;
        float disc = expf(-opt[i].rate * opt[i].years);
        float n1 = cnd(d1), n2 = cnd(d2);
        opt[i].call = opt[i].spot * n1 - opt[i].strike * disc * n2;
        opt[i].put = opt[i].strike * disc * (1.0f - n2) - opt[i].spot * (1.0f - n1);
        opt[i].delta = n1;
    }
}

static void forces(Particle *p, float *ax, float *ay, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float dx = p[j].x - p[i].x, dy = p[j].y - p[i].y;
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + 0.01f);
            ax[i] += p[j].m * dx * inv * inv * inv;
            ay[i] += p[j].m * dy * inv * inv * inv;
        }
}

static void kick(Particle *parts, const float *ax, const float *ay, int n, float dt) {
    for (int i = 0; i < n; i++) {
        parts[i].vx += dt * ax[i];
        (parts + i)->vy += dt * ay[i];
    }
}

static void drift(System *s) {
    for (int i = 0; i < s->n; i++) {
        s->parts[i].x += s->dt * s->parts[i].vx;
        s->parts[i].y += s->dt * s->parts[i].vy;
    }
}

static void sharpen(float *out, const float *in, const float *blur, int w, int h, int nc) {
    for (long i = 0; i < (long)w * h * nc; i++)
        out[i] = in[i] + 0.75f * (in[i] - blur[i]);
}

static void scale_all(float *a, Shape sh, float f) {
    for (long i = 0; i < ((long) sh.rows) * sh.cols; i++)
        a[i] *= f;
}

#define NOPT 2000
#define NP 256
#define W 37
#define H 23
#define NC 3

int main(void) {
    static Option book[NOPT];
    static Particle parts[NP];
    static float ax[NP], ay[NP];
    static float in[W * H * NC], blur[W * H * NC], out[W * H * NC];
    unsigned state = 12345u;
    for (int i = 0; i < NOPT; i++) {
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
    }
    for (int i = 0; i < NP; i++) {
        parts[i].x = (float)((i * 37) % 101) / 10.0f;
        parts[i].y = (float)((i * 53) % 97) / 10.0f;
        parts[i].vx = parts[i].vy = 0.0f;
        parts[i].m = 1.0f + (float)(i % 7) / 7.0f;
    }
    for (int i = 0; i < W * H * NC; i++) in[i] = (float)(i % 17) / 17.0f, blur[i] = (float)(i % 13) / 13.0f;
    System sys = {NP, parts, 0.01f};
    Shape sh = {H, W * NC};

    price(book, NOPT);
    for (int step = 0; step < 3; step++) {
        for (int i = 0; i < NP; i++) ax[i] = ay[i] = 0.0f;
        forces(parts, ax, ay, NP);
        kick(parts, ax, ay, NP, 0.01f);
        drift(&sys);
    }
    sharpen(out, in, blur, W, H, NC);
    scale_all(out, sh, 0.5f);

    double sc = 0.0, sp = 0.0, sd = 0.0, px = 0.0, pv = 0.0, so = 0.0;
    for (int i = 0; i < NOPT; i++) {
        sc += book[i].call * (double)(i % 13 + 1);
        sp += book[i].put * (double)(i % 13 + 1);
        sd += book[i].delta * (double)(i % 13 + 1);
    }
    for (int i = 0; i < NP; i++) px += parts[i].x * (i % 5 + 1) + parts[i].y, pv += parts[i].vx - parts[i].vy * (i % 3);
    for (int i = 0; i < W * H * NC; i++) so += out[i] * (i % 7 + 1);
    printf("calls %.6e\nputs %.6e\ndeltas %.6e\npos %.6e\nvel %.6e\nsharp %.6e\n", sc, sp, sd, px, pv, so);
    return 0;
}
