/* Array-of-structs forms: most stay as written, located; a whole store and a nested member run. */
#include <stdio.h>

typedef struct { float x, y; } P;
typedef struct { P pos; float w; } Q;
typedef union { float f; int i; } U;

static void store_whole(P *a, P s, float *o, int n) {
    for (int i = 0; i < n; i++) {
        a[i] = s;
        o[i] = a[i].x * 2.0f;
    }
}

static void address_of(P *a, float **out, int n) {
    for (int i = 0; i < n; i++)
        out[i] = &a[i].x;
}

static void nested(Q *q, float *o, int n) {
    for (int i = 0; i < n; i++)
        o[i] = q[i].pos.x * q[i].w;
}

static void grid(P **g, float *o) {
    for (int i = 0; i < 8; i++)
        o[i] = g[i][i].y;
}

static void unions(U *u, int n) {
    for (int i = 0; i < n; i++)
        u[i].f = 2.0f * (float)i;
}

static void wrapping_bound(float *a, long w, long h) {   /* long * long may overflow the model */
    for (long i = 0; i < (unsigned long)w * h; i++)
        a[i] = 1.0f;
}

static void narrowing_bound(float *a, long w, int h) {
    for (long i = 0; i < (int)w * h; i++)
        a[i] += 2.0f;
}

float scale_of(float v) { return 2.0f * v; }
static float g_bias = 1.0f;
static float biased(float v) { g_bias += 0.5f; return v + g_bias; }

static void helpers(float *o, int n) {
    for (int i = 0; i < n; i++)
        o[i] = scale_of(o[i]) + 1.0f;
}

static void helpers_global(float *o, int n) {
    for (int i = 0; i < n; i++)
        o[i] = biased(o[i]);
}

int main(void) {
    static P a[16], g[8][8];
    static Q q[16];
    static U u[16];
    static float o[16], *ptrs[16];
    P s = {1.0f, 2.0f};
    for (int i = 0; i < 16; i++) q[i].pos.x = (float)i, q[i].w = 0.5f;
    for (int i = 0; i < 8; i++) g[i][i].y = (float)(3 * i);
    store_whole(a, s, o, 16);
    address_of(a, ptrs, 16);
    nested(q, o, 16);
    P *rows[8];
    for (int i = 0; i < 8; i++) rows[i] = g[i];
    grid(rows, o + 8);
    unions(u, 16);
    wrapping_bound(o, 2, 3);
    narrowing_bound(o, 3, 2);
    helpers(o, 16);
    helpers_global(o, 16);
    double t = 0.0;
    for (int i = 0; i < 16; i++) t += a[i].x + a[i].y * 3 + o[i] * (i + 1) + u[i].f + (ptrs[i] == &a[i].x);
    printf("%.4f\n", t);
    return 0;
}
