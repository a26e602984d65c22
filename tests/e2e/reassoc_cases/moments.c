/* The collision of a D2Q9 lattice-Boltzmann step (the shape of c_examples/real/lbm_d2q9.c): per
 * cell a local copy f[Q] of the populations pulled from periodic neighbours, their moments
 * (density, momentum) as 9-term float sums, and the relaxation towards equilibrium (a map over
 * q). The transverse momentum uy cancels to ~1e-4 of the populations, so reassociating its sum
 * moves it in the third digit; with --strict-fp mdpoly keeps the sums in order and every value
 * is exact. */
#include <stdio.h>
#include <stdlib.h>

#define Q 9
#define NX 24
#define NY 12

static const int cx[Q] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
static const int cy[Q] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
static const int opp[Q] = {0, 3, 4, 1, 2, 7, 8, 5, 6};
static const float wq[Q] = {4.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9,
                            1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36};

static void collide(int nx, int ny, float omega, const float *fin, float *fout, float *uy_out,
                    const unsigned char *solid)
{
    for (int c = 0; c < nx * ny; c++) {
        float f[Q];
        for (int q = 0; q < Q; q++) {   /* pull streaming, periodic: a non-affine subscript */
            int from = c - cx[q] - nx * cy[q];
            from = from < 0 ? from + nx * ny : (from >= nx * ny ? from - nx * ny : from);
            f[q] = fin[from * Q + q];
        }
        if (solid[c]) {     /* bounce-back */
            for (int q = 0; q < Q; q++)
                fout[c * Q + q] = f[opp[q]];
            uy_out[c] = 0.0f;
        } else {
            float rho = 0.0f, ux = 0.0f, uy = 0.0f;
            for (int q = 0; q < Q; q++) {
                rho += f[q];
                ux += f[q] * cx[q];
                uy += f[q] * cy[q];
            }
            ux = ux / rho;
            uy = uy / rho;
            uy_out[c] = uy;
            float usq = 1.5f * (ux * ux + uy * uy);
            for (int q = 0; q < Q; q++) {
                float cu = 3.0f * (cx[q] * ux + cy[q] * uy);
                float feq = wq[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
                fout[c * Q + q] = f[q] + omega * (feq - f[q]);
            }
        }
    }
}

int main(void)
{
    float *a = malloc(NX * NY * Q * sizeof(float)), *b = malloc(NX * NY * Q * sizeof(float));
    float *uy = malloc(NX * NY * sizeof(float));
    unsigned char solid[NX * NY];
    if (!a || !b || !uy)
        return 1;
    for (int c = 0; c < NX * NY; c++)
        solid[c] = (unsigned char)(c % 17 == 3);
    for (int c = 0; c < NX * NY; c++)
        for (int q = 0; q < Q; q++)
            a[c * Q + q] = wq[q] * (1.0f + 0.01f * (float)((c * 7 + q) % 11 - 5) / 5.0f);
    for (int step = 0; step < 4; step++) {
        collide(NX, NY, 1.0f / 0.6f, a, b, uy, solid);
        float *t = a;
        a = b;
        b = t;
    }
    for (int c = 0; c < NX * NY; c += 7)
        printf("uy %d %.9e\n", c, uy[c]);
    for (int c = 0; c < NX * NY * Q; c += 61)
        printf("f %d %.9e\n", c, a[c]);
    free(a);
    free(b);
    free(uy);
    return 0;
}
