/* Direct-sum gravitational n-body integration over a struct of arrays: all-pairs
 * accelerations with softening, a leapfrog (kick-drift) update, then the kinetic and potential
 * energies and the centre of mass.
 *
 *   ./nbody [scale] [steps]        (default 1 3: 1024 bodies; the benchmark uses 8 3)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int n;
    float *x, *y, *z;
    float *vx, *vy, *vz;
    float *mass;
} Bodies;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void checksum(const char *name, const float *x, long n)
{
    double s = 0.0, w = 0.0, a = 0.0;
    long i;
    for (i = 0; i < n; i++) {
        s += x[i];
        w += x[i] * (double)(i % 13 + 1);
        a += fabs(x[i]);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

static float *field(int n)
{
    float *p = malloc((size_t)n * sizeof *p);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

static void accelerations(const Bodies *b, float *ax, float *ay, float *az, float soft2)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int i = 0; i < b->n; i++) {
        float fx = 0.0f, fy = 0.0f, fz = 0.0f;
        for (int j = 0; j < b->n; j++) {
            float dx = b->x[j] - b->x[i];
            float dy = b->y[j] - b->y[i];
            float dz = b->z[j] - b->z[i];
            float d2 = dx * dx + dy * dy + dz * dz + soft2;
            float inv = 1.0f / sqrtf(d2);
            float s = b->mass[j] * inv * inv * inv;
            fx += s * dx;
            fy += s * dy;
            fz += s * dz;
        }
        ax[i] = fx;
        ay[i] = fy;
        az[i] = fz;
    }
}

static void kick_drift(Bodies *b, const float *ax, const float *ay, const float *az, float dt)
{
    // BENCH-OMP: #pragma omp parallel for
    for (int i = 0; i < b->n; i++) {
        b->vx[i] += dt * ax[i];
        b->vy[i] += dt * ay[i];
        b->vz[i] += dt * az[i];
        b->x[i] += dt * b->vx[i];
        b->y[i] += dt * b->vy[i];
        b->z[i] += dt * b->vz[i];
    }
}

static double potential_energy(const Bodies *b, float soft2)
{
    double pot = 0.0;
    // BENCH-OMP: #pragma omp parallel for reduction(+:pot) schedule(dynamic, 16)
    for (int i = 0; i < b->n; i++)
        for (int j = i + 1; j < b->n; j++) {
            float dx = b->x[j] - b->x[i];
            float dy = b->y[j] - b->y[i];
            float dz = b->z[j] - b->z[i];
            pot -= (double)(b->mass[i] * b->mass[j] / sqrtf(dx * dx + dy * dy + dz * dz + soft2));
        }
    return pot;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 3;
    Bodies b;
    float *ax, *ay, *az;
    const float soft2 = 0.01f, dt = 0.001f;
    uint32_t state = 2024u;
    double kin = 0.0, pot, mx = 0.0, mx_abs = 0.0, t0, t1;

    if (scale < 1 || steps < 1) { fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]); return 2; }
    b.n = 1024 * scale;
    b.x = field(b.n); b.y = field(b.n); b.z = field(b.n);
    b.vx = field(b.n); b.vy = field(b.n); b.vz = field(b.n);
    b.mass = field(b.n);
    ax = field(b.n); ay = field(b.n); az = field(b.n);
    for (int i = 0; i < b.n; i++) {
        float r[7];
        for (int k = 0; k < 7; k++) {
            state = state * 1664525u + 1013904223u;
            r[k] = (float)(state >> 8) / 16777216.0f;   /* [0, 1) */
        }
        b.x[i] = 2.0f * r[0] - 1.0f;
        b.y[i] = 2.0f * r[1] - 1.0f;
        b.z[i] = 2.0f * r[2] - 1.0f;
        b.vx[i] = 0.1f * (r[3] - 0.5f);
        b.vy[i] = 0.1f * (r[4] - 0.5f);
        b.vz[i] = 0.1f * (r[5] - 0.5f);
        b.mass[i] = (0.5f + r[6]) / (float)b.n;
    }

    t0 = now();
    for (int s = 0; s < steps; s++) {
        accelerations(&b, ax, ay, az, soft2);
        kick_drift(&b, ax, ay, az, dt);
    }
    for (int i = 0; i < b.n; i++) {
        kin += 0.5 * b.mass[i] * ((double)b.vx[i] * b.vx[i] + (double)b.vy[i] * b.vy[i]
                                  + (double)b.vz[i] * b.vz[i]);
        mx += (double)b.mass[i] * b.x[i];
        mx_abs += fabs((double)b.mass[i] * b.x[i]);
    }
    pot = potential_energy(&b, soft2);
    t1 = now();

    checksum("x", b.x, b.n);
    checksum("vy", b.vy, b.n);
    checksum("az", az, b.n);
    printf("checksum energy %.10e %.10e %.10e\n", kin + pot, kin, fabs(kin) + fabs(pot));
    printf("checksum center %.10e %.10e %.10e\n", mx, mx, mx_abs);
    printf("time_s %.6f\n", t1 - t0);
    free(b.x); free(b.y); free(b.z); free(b.vx); free(b.vy); free(b.vz); free(b.mass);
    free(ax); free(ay); free(az);
    return 0;
}
