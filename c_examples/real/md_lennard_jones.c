/* Lennard-Jones molecular dynamics in a periodic box: all-pairs forces with a cutoff and the
 * minimum-image convention, velocity-Verlet steps, a velocity-rescaling thermostat every few
 * steps, centre-of-mass drift removed at the start.
 *
 *   ./md_lennard_jones [scale] [steps]      (default 1 8: 500 atoms; the benchmark uses 4 20)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    double x, y, z;
    double vx, vy, vz;
    double fx, fy, fz;
} Atom;

typedef struct {
    int natoms;
    double box, rc2, dt, temperature;
    double epot, ekin;
} System;

static uint32_t lcg = 777u;

static double uniform(void)
{
    lcg = lcg * 1103515245u + 12345u;
    return (double)((lcg >> 8) & 0xffffff) / 16777216.0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* atoms on a simple cubic lattice, slightly displaced, random velocities */
static void place_atoms(Atom *atoms, const System *sys)
{
    int side = (int)ceil(cbrt((double)sys->natoms));
    double a = sys->box / side;
    for (int idx = 0; idx < sys->natoms; idx++) {
        int ix = idx / (side * side), iy = (idx / side) % side, iz = idx % side;
        atoms[idx].x = (ix + 0.5) * a + 0.05 * (uniform() - 0.5);
        atoms[idx].y = (iy + 0.5) * a + 0.05 * (uniform() - 0.5);
        atoms[idx].z = (iz + 0.5) * a + 0.05 * (uniform() - 0.5);
        atoms[idx].vx = uniform() - 0.5;
        atoms[idx].vy = uniform() - 0.5;
        atoms[idx].vz = uniform() - 0.5;
        atoms[idx].fx = atoms[idx].fy = atoms[idx].fz = 0.0;
    }
}

/* each atom sums the forces of every other atom within the cutoff; returns the potential energy */
static double lj_forces(Atom *atoms, int n, double box, double rc2)
{
    double epot = 0.0;
    // BENCH-OMP: #pragma omp parallel for reduction(+:epot) schedule(static)
    for (int i = 0; i < n; i++) {
        double fx = 0.0, fy = 0.0, fz = 0.0, e = 0.0;
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            double dx = atoms[i].x - atoms[j].x;
            double dy = atoms[i].y - atoms[j].y;
            double dz = atoms[i].z - atoms[j].z;
            dx -= box * rint(dx / box);          /* minimum image */
            dy -= box * rint(dy / box);
            dz -= box * rint(dz / box);
            double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < rc2) {
                double inv2 = 1.0 / r2;
                double inv6 = inv2 * inv2 * inv2;
                double f = 48.0 * inv2 * inv6 * (inv6 - 0.5);
                fx += f * dx;
                fy += f * dy;
                fz += f * dz;
                e += 4.0 * inv6 * (inv6 - 1.0);
            }
        }
        atoms[i].fx = fx;
        atoms[i].fy = fy;
        atoms[i].fz = fz;
        epot += 0.5 * e;
    }
    return epot;
}

static void kick(Atom *atoms, int n, double h)
{
    for (int i = 0; i < n; i++) {
        atoms[i].vx += h * atoms[i].fx;
        atoms[i].vy += h * atoms[i].fy;
        atoms[i].vz += h * atoms[i].fz;
    }
}

static void drift(Atom *atoms, int n, double dt, double box)
{
    for (int i = 0; i < n; i++) {
        double x = atoms[i].x + dt * atoms[i].vx;
        double y = atoms[i].y + dt * atoms[i].vy;
        double z = atoms[i].z + dt * atoms[i].vz;
        x -= box * floor(x / box);               /* back into the box */
        y -= box * floor(y / box);
        z -= box * floor(z / box);
        atoms[i].x = x;
        atoms[i].y = y;
        atoms[i].z = z;
    }
}

static double kinetic(const Atom *atoms, int n)
{
    double ek = 0.0;
    for (int i = 0; i < n; i++)
        ek += atoms[i].vx * atoms[i].vx + atoms[i].vy * atoms[i].vy + atoms[i].vz * atoms[i].vz;
    return 0.5 * ek;
}

static void rescale(Atom *atoms, System *sys)
{
    int n = sys->natoms;
    double t = 2.0 * kinetic(atoms, n) / (3.0 * n);
    double lambda = sqrt(sys->temperature / t);
    for (int i = 0; i < n; i++) {
        atoms[i].vx *= lambda;
        atoms[i].vy *= lambda;
        atoms[i].vz *= lambda;
    }
}

static void remove_drift(Atom *atoms, int n)
{
    double px = 0.0, py = 0.0, pz = 0.0;
    for (int i = 0; i < n; i++) {
        px += atoms[i].vx;
        py += atoms[i].vy;
        pz += atoms[i].vz;
    }
    px /= n;
    py /= n;
    pz /= n;
    for (int i = 0; i < n; i++) {
        atoms[i].vx -= px;
        atoms[i].vy -= py;
        atoms[i].vz -= pz;
    }
}

static void checksum_member(const char *name, const Atom *atoms, int n, int which)
{
    double s = 0.0, w = 0.0, a = 0.0;
    for (int i = 0; i < n; i++) {
        double v = which == 0 ? atoms[i].x : which == 1 ? atoms[i].vy : atoms[i].fz;
        s += v;
        w += v * (double)(i % 13 + 1);
        a += fabs(v);
    }
    printf("checksum %s %.10e %.10e %.10e\n", name, s, w, a);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 8;
    System sys;
    double rc = 2.5, t0, t1;

    if (scale < 1 || steps < 1) { fprintf(stderr, "usage: %s [scale>=1] [steps>=1]\n", argv[0]); return 2; }
    sys.natoms = 500 * scale;
    sys.box = cbrt(sys.natoms / 0.8);
    if (rc > 0.5 * sys.box)
        rc = 0.5 * sys.box;
    sys.rc2 = rc * rc;
    sys.dt = 0.002;
    sys.temperature = 1.0;
    Atom *atoms = malloc((size_t)sys.natoms * sizeof *atoms);
    if (!atoms) { fprintf(stderr, "out of memory\n"); return 1; }
    place_atoms(atoms, &sys);
    remove_drift(atoms, sys.natoms);
    rescale(atoms, &sys);

    t0 = now();
    sys.epot = lj_forces(atoms, sys.natoms, sys.box, sys.rc2);
    for (int step = 0; step < steps; step++) {
        kick(atoms, sys.natoms, 0.5 * sys.dt);
        drift(atoms, sys.natoms, sys.dt, sys.box);
        sys.epot = lj_forces(atoms, sys.natoms, sys.box, sys.rc2);
        kick(atoms, sys.natoms, 0.5 * sys.dt);
        sys.ekin = kinetic(atoms, sys.natoms);
        if (step % 5 == 4)
            rescale(atoms, &sys);
    }
    t1 = now();

    checksum_member("x", atoms, sys.natoms, 0);
    checksum_member("vy", atoms, sys.natoms, 1);
    checksum_member("fz", atoms, sys.natoms, 2);
    printf("checksum energy %.10e %.10e %.10e\n", sys.epot + sys.ekin, sys.epot, fabs(sys.epot) + fabs(sys.ekin));
    printf("time_s %.6f\n", t1 - t0);
    free(atoms);
    return 0;
}
