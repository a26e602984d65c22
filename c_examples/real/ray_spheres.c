/* A small ray caster, written the way graphics code is: a vec3 struct with helpers that take and
 * return it by value, an array of sphere structs, a nearest-hit search per pixel, Lambert shading
 * with a shadow test, and an image of rgb structs addressed as img[y * w + x], then a tone-mapping
 * pass over the image.
 *
 *   ./ray_spheres [scale] [frames]   (default 1 2: 640x480, 48 spheres; the benchmark uses 2 3)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { double x, y, z; } vec3;
typedef struct { vec3 center; double radius; vec3 color; } Sphere;
typedef struct { float r, g, b; } Pixel;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static vec3 v_add(vec3 a, vec3 b) { return (vec3){a.x + b.x, a.y + b.y, a.z + b.z}; }
static vec3 v_sub(vec3 a, vec3 b) { return (vec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static vec3 v_scale(vec3 a, double s) { return (vec3){a.x * s, a.y * s, a.z * s}; }
static double v_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static vec3 v_unit(vec3 a)
{
    double l = sqrt(v_dot(a, a));
    return v_scale(a, 1.0 / l);
}

/* distance along the unit ray (o, d) to sphere s, or a negative value for a miss */
static double hit(Sphere s, vec3 o, vec3 d)
{
    vec3 oc = v_sub(o, s.center);
    double b = v_dot(oc, d);
    double c = v_dot(oc, oc) - s.radius * s.radius;
    double disc = b * b - c;
    if (disc < 0.0)
        return -1.0;
    double t = -b - sqrt(disc);
    return t > 1e-6 ? t : -1.0;
}

static void render(Pixel *img, int w, int h, const Sphere *sph, int ns, vec3 eye, vec3 light)
{
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            vec3 px = {(x - 0.5 * w) / h, (y - 0.5 * h) / h, 1.0};
            vec3 d = v_unit(px);
            double best = 1e30;
            int hit_at = -1;
            for (int k = 0; k < ns; k++) {
                double t = hit(sph[k], eye, d);
                if (t > 0.0 && t < best) {
                    best = t;
                    hit_at = k;
                }
            }
            Pixel out = {0.1f, 0.1f, 0.15f};
            if (hit_at >= 0) {
                vec3 p = v_add(eye, v_scale(d, best));
                vec3 n = v_unit(v_sub(p, sph[hit_at].center));
                vec3 l = v_unit(v_sub(light, p));
                double lambert = v_dot(n, l);
                int shadow = 0;
                for (int k = 0; k < ns; k++)
                    if (k != hit_at && hit(sph[k], p, l) > 0.0)
                        shadow = 1;
                double k_d = lambert > 0.0 && !shadow ? lambert : 0.0;
                out.r = (float)(0.05 + k_d * sph[hit_at].color.x);
                out.g = (float)(0.05 + k_d * sph[hit_at].color.y);
                out.b = (float)(0.05 + k_d * sph[hit_at].color.z);
            }
            img[y * w + x] = out;
        }
    }
}

static Pixel tone(Pixel p, float exposure)
{
    Pixel q;
    q.r = 1.0f - expf(-exposure * p.r);
    q.g = 1.0f - expf(-exposure * p.g);
    q.b = 1.0f - expf(-exposure * p.b);
    return q;
}

static void tone_map(Pixel *img, int n, float exposure)
{
    for (int i = 0; i < n; i++)
        img[i] = tone(img[i], exposure);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1, frames = argc > 2 ? atoi(argv[2]) : 2;
    if (scale < 1 || frames < 1) {
        fprintf(stderr, "usage: %s [scale>=1] [frames>=1]\n", argv[0]);
        return 2;
    }
    int w = 640 * scale, h = 480 * scale, ns = 48;
    Pixel *img = malloc(sizeof *img * (size_t)w * (size_t)h);
    Sphere *sph = malloc(sizeof *sph * (size_t)ns);
    if (!img || !sph) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int k = 0; k < ns; k++) {
        sph[k].center = (vec3){-3.0 + 6.0 * (k % 8) / 7.0, -2.0 + 4.0 * (k / 8) / 5.0, 6.0 + (k % 5)};
        sph[k].radius = 0.3 + 0.1 * (k % 3);
        sph[k].color = (vec3){0.2 + 0.8 * (k % 4) / 3.0, 0.3 + 0.7 * (k % 5) / 4.0, 0.9 - 0.1 * (k % 7)};
    }
    double t0 = now();
    double sum = 0.0, weighted = 0.0, abs_sum = 0.0;
    for (int f = 0; f < frames; f++) {
        vec3 eye = {0.1 * f, 0.0, -1.0};
        vec3 light = {5.0, -5.0 + f, -3.0};
        render(img, w, h, sph, ns, eye, light);
        tone_map(img, w * h, 1.5f);
    }
    double t1 = now();
    for (int i = 0; i < w * h; i++) {
        double v = img[i].r + 2.0 * img[i].g + 3.0 * img[i].b;
        sum += v;
        weighted += v * (double)(i % 13 + 1);
        abs_sum += fabs(img[i].r - img[i].b);
    }
    printf("checksum image %.10e %.10e %.10e\n", sum, weighted, abs_sum);
    printf("time_s %.6f\n", t1 - t0);
    free(img);
    free(sph);
    return 0;
}
