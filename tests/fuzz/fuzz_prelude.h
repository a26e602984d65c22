#include <math.h>
#include <stdio.h>
#include <string.h>

/* Deterministic inputs: an LCG, reseeded per array. Value kinds: 0 zero, 1 frac (k/4, k in
 * -8..8), 2 small (-8..8), 3 pow2 (+-1/2, +-1, +-2), 4 sign (+-1), 5 pos (1..8). */
static unsigned fz_state = 1u;

static double fz_value(int kind)
{
    static const double pow2[6] = {0.5, 1.0, 2.0, -0.5, -1.0, -2.0};
    int r;
    fz_state = fz_state * 1103515245u + 12345u;
    r = (int)((fz_state >> 16) & 0x7fffu);
    switch (kind) {
    case 0: return 0.0;
    case 1: return (r % 17 - 8) / 4.0;
    case 2: return (double)(r % 17 - 8);
    case 3: return pow2[r % 6];
    case 4: return r % 2 ? 1.0 : -1.0;
    default: return (double)(r % 8 + 1);
    }
}

/* Types: 0 int, 1 unsigned, 2 char, 3 float, 4 double, 5 long, 6 unsigned char, 7 short. */
static void fz_init(void *p, long n, int type, int kind, unsigned seed)
{
    long i;
    fz_state = seed;
    for (i = 0; i < n; i++) {
        double v = fz_value(kind);
        switch (type) {
        case 0: ((int *)p)[i] = (int)v; break;
        case 1: ((unsigned *)p)[i] = (unsigned)(int)v; break;
        case 2: ((char *)p)[i] = (char)(int)v; break;
        case 3: ((float *)p)[i] = (float)v; break;
        case 4: ((double *)p)[i] = v; break;
        case 5: ((long *)p)[i] = (long)v; break;
        case 6: ((unsigned char *)p)[i] = (unsigned char)(int)v; break;
        default: ((short *)p)[i] = (short)v; break;
        }
    }
}

/* Print an exact digest of n elements (or, with FZ_PRINT_ALL, every element); -0.0 counts as 0. */
static void fz_dump(const char *tag, const void *p, long n, int type)
{
    unsigned long long h = 1469598103934665603ull;
    long i;
    for (i = 0; i < n; i++) {
        unsigned long long bits;
        switch (type) {
        case 0: bits = (unsigned long long)(long long)((const int *)p)[i]; break;
        case 1: bits = ((const unsigned *)p)[i]; break;
        case 2: bits = (unsigned long long)(long long)((const char *)p)[i]; break;
        case 3: { float f = ((const float *)p)[i]; unsigned u; if (f == 0.0f) f = 0.0f;
                  memcpy(&u, &f, sizeof u); bits = u; break; }
        case 4: { double d = ((const double *)p)[i]; if (d == 0.0) d = 0.0;
                  memcpy(&bits, &d, sizeof bits); break; }
        case 5: bits = (unsigned long long)((const long *)p)[i]; break;
        case 6: bits = ((const unsigned char *)p)[i]; break;
        default: bits = (unsigned long long)(long long)((const short *)p)[i]; break;
        }
#ifdef FZ_PRINT_ALL
        if (type == 3) printf("%s[%ld] = %.9g\n", tag, i, (double)((const float *)p)[i]);
        else if (type == 4) printf("%s[%ld] = %.17g\n", tag, i, ((const double *)p)[i]);
        else printf("%s[%ld] = %lld\n", tag, i, (long long)bits);
#endif
        h = (h ^ bits) * 1099511628211ull;
    }
    printf("%s %ld %016llx\n", tag, n, h);
}
