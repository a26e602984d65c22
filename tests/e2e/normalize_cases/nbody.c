/* One n-body step over a struct of arrays (positions, velocities, masses behind one pointer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    float *x, *y, *z;
    float *vx, *vy, *vz;
    float *m;
    int n;
    float soft;
} Bodies;

static void accelerate(Bodies *s, float dt) {
    for (int i = 0; i < s->n; i++) {
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
        for (int j = 0; j < s->n; j++) {
            float dx = s->x[j] - s->x[i];
            float dy = s->y[j] - s->y[i];
            float dz = s->z[j] - s->z[i];
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + s->soft);
            float inv3 = inv * inv * inv;
            ax += s->m[j] * dx * inv3;
            ay += s->m[j] * dy * inv3;
            az += s->m[j] * dz * inv3;
        }
        s->vx[i] += dt * ax;
        s->vy[i] += dt * ay;
        s->vz[i] += dt * az;
    }
}

static void move(Bodies *s, float dt) {
    for (int i = 0; i < s->n; i++) {
        s->x[i] += dt * s->vx[i];
        s->y[i] += dt * s->vy[i];
        s->z[i] += dt * s->vz[i];
    }
}

int main(void) {
    Bodies b;
    b.n = 300;
    b.soft = 1e-2f;
    float **fields[] = {&b.x, &b.y, &b.z, &b.vx, &b.vy, &b.vz, &b.m};
    for (int f = 0; f < 7; f++) *fields[f] = malloc(sizeof(float) * b.n);
    for (int i = 0; i < b.n; i++) {
        b.x[i] = (float)((i * 37) % 101) / 10.0f;
        b.y[i] = (float)((i * 53) % 97) / 10.0f;
        b.z[i] = (float)((i * 71) % 89) / 10.0f;
        b.vx[i] = b.vy[i] = b.vz[i] = 0.0f;
        b.m[i] = 1.0f + (float)(i % 3);
    }
    for (int step = 0; step < 3; step++) {
        accelerate(&b, 0.01f);
        move(&b, 0.01f);
    }
    double e = 0.0;
    for (int i = 0; i < b.n; i++) e += b.m[i] * (b.vx[i] * b.vx[i] + b.vy[i] * b.vy[i] + b.vz[i] * b.vz[i]);
    printf("%.5e %.5f %.5f %.5f\n", e, b.x[5], b.y[77], b.z[299]);
    for (int f = 0; f < 7; f++) free(*fields[f]);
    return 0;
}
