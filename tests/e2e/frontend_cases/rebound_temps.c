/* Temporaries given new values by later statements of their own block (straight-line code):
 * a periodic minimum image updated in place and then tested, an int clamp computed in two
 * steps and used in a condition and a subscript, a counter bumped with ++, and a temporary
 * whose array input the same body overwrites before it is reassigned. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 300

static double pos[N], frc[N], pot[N], damp[N], v[N], w[N];
static int bins[N];

static void pair_forces(int n, double box, double rc2)
{
    for (int i = 0; i < n; i++) {
        double f = 0.0, e = 0.0;
        for (int j = 0; j < n; j++) {
            double dx = pos[i] - pos[j];
            dx -= box * rint(dx / box);
            double r2 = dx * dx;
            r2 += 0.01;
            if (r2 < rc2) {
                double inv = 1.0 / r2;
                f += inv * dx;
                e += inv;
            }
        }
        frc[i] = f;
        pot[i] = e;
    }
}

static void sponge(int n, int width)
{
    for (int i = 0; i < n; i++) {
        int d = i;
        d = d < n - 1 - i ? d : n - 1 - i;
        float s = 1.0f;
        if (d < width)
            s = 0.5f + 0.5f * (float)d / (float)width;
        damp[i] = s * damp[i];
    }
}

static void shifted(int n)
{
    for (int i = 1; i < n - 1; i++) {
        int k = i;
        k++;
        k -= 2;
        double t = v[i];
        v[i] = 2.0 * t;          /* t still holds the old value of v[i] */
        t = t + v[i];
        w[i] = t + damp[k];
        bins[i] = k;
    }
}

/* a one-pole filter per channel: 'out' reads the state 'z' that the next statement overwrites */
static void filter_channels(int channels, int n, float *sig)
{
    for (int ch = 0; ch < channels; ch++) {
        float z = 0.0f;
        for (int i = 0; i < n; i++) {
            float out = sig[ch * n + i] + z;
            z = 0.5f * out;
            sig[ch * n + i] = out - 0.25f * z;
        }
    }
}

static float sig[4 * N];

int main(void)
{
    for (int i = 0; i < N; i++) {
        pos[i] = fmod(i * 7.31, 50.0);
        damp[i] = 1.0 + (i % 5);
        v[i] = (double)(i % 11) - 5.0;
    }
    pair_forces(N, 50.0, 36.0);
    sponge(N, 12);
    shifted(N);
    for (int i = 0; i < 4 * N; i++)
        sig[i] = (float)((i * 37) % 19) - 9.0f;
    filter_channels(4, N, sig);
    double ss = 0.0;
    for (int i = 0; i < 4 * N; i++)
        ss += sig[i] * (i % 5 + 1);
    printf("%.6f\n", ss);
    double sf = 0.0, sp = 0.0, sd = 0.0, sw = 0.0;
    long sb = 0;
    for (int i = 0; i < N; i++) {
        sf += frc[i] * (i + 1);
        sp += pot[i];
        sd += damp[i] * (i % 3 + 1);
        sw += w[i] + v[i];
        sb += bins[i] * (i % 7);
    }
    printf("%.10f %.10f %.10f %.10f %ld\n", sf, sp, sd, sw, sb);
    return 0;
}
