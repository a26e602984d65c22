/* 3-D heat stencil over a flat grid, written with an index temporary and clamped neighbours. */
#include <stdio.h>
#define NX 24
#define NY 20
#define NZ 16

static float in[NX * NY * NZ], out[NX * NY * NZ], clamp_out[NX * NY * NZ];

static void heat(int nsteps) {
    for (int t = 0; t < nsteps; t++) {
        for (int z = 1; z < NZ - 1; z++)
            for (int y = 1; y < NY - 1; y++)
                for (int x = 1; x < NX - 1; x++) {
                    int c = x + y * NX + z * NX * NY;
                    out[c] = 0.4f * in[c] + 0.1f * (in[c - 1] + in[c + 1] + in[c - NX] + in[c + NX])
                             + 0.1f * (in[c - NX * NY] + in[c + NX * NY]);
                }
        for (int z = 1; z < NZ - 1; z++)
            for (int y = 1; y < NY - 1; y++)
                for (int x = 1; x < NX - 1; x++) {
                    int c = x + y * NX + z * NX * NY;
                    in[c] = out[c];
                }
    }
}

/* Boundary cells read themselves instead of the missing neighbour (index selects). */
static void clamped(void) {
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                int c = x + y * NX + z * NX * NY;
                int w = (x == 0) ? c : c - 1;
                int e = (x == NX - 1) ? c : c + 1;
                int s = y == 0 ? c : c - NX;
                int n = y == NY - 1 ? c : c + NX;
                clamp_out[c] = 0.5f * in[c] + 0.125f * (in[w] + in[e] + in[s] + in[n]);
            }
}

int main(void) {
    for (int i = 0; i < NX * NY * NZ; i++) {
        in[i] = (float)((i * 37) % 101) / 101.0f;
        out[i] = 0.0f;
    }
    heat(3);
    clamped();
    double sum = 0.0, csum = 0.0;
    for (int i = 0; i < NX * NY * NZ; i++) {
        sum += in[i] * (1 + i % 7);
        csum += clamp_out[i] * (1 + i % 5);
    }
    printf("%.6f %.6f %.6f %.6f\n", sum, csum, in[NX + NX * NY + 3], clamp_out[NX * NY * 2 + 5]);
    return 0;
}
