/* Global sequence alignment (Needleman-Wunsch) of two DNA sequences, the way bioinformatics
 * teaching codes write it: a flat score matrix H of (n + 1) x (m + 1) ints with a run-time row
 * length, a substitution table indexed by base codes, linear gap penalties, the boundary row and
 * column first, then the recurrence (each cell from its left, upper and upper-left neighbours),
 * and a traceback from the corner that counts matches, mismatches and gaps.
 *
 *   ./seq_align [scale]   (default 1: 3000 x 3100 bases; the benchmark uses 6)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GAP (-2)

static const int subst[4][4] = {{2, -1, -1, -1}, {-1, 2, -1, -1}, {-1, -1, 2, -1}, {-1, -1, -1, 2}};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void random_bases(unsigned char *s, int len, unsigned *state)
{
    for (int i = 0; i < len; i++) {
        *state = *state * 1664525u + 1013904223u;
        s[i] = (unsigned char)((*state >> 24) & 3);
    }
}

/* the second sequence: the first with point mutations, insertions and deletions */
static int mutate(const unsigned char *a, int n, unsigned char *b, int cap, unsigned *state)
{
    int m = 0;
    for (int i = 0; i < n && m < cap; i++) {
        *state = *state * 1664525u + 1013904223u;
        unsigned r = (*state >> 16) % 100;
        if (r < 3)
            continue;                                 /* deletion */
        b[m++] = r < 10 ? (unsigned char)((a[i] + 1 + r % 3) & 3) : a[i];
        if (r >= 97 && m < cap)
            b[m++] = (unsigned char)(r & 3);          /* insertion */
    }
    return m;
}

static void score_matrix(const unsigned char *a, int n, const unsigned char *b, int m, int *H)
{
    int ld = m + 1;
    for (int i = 0; i <= n; i++)
        H[i * ld] = i * GAP;
    for (int j = 0; j <= m; j++)
        H[j] = j * GAP;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int diag = H[(i - 1) * ld + j - 1] + subst[a[i - 1]][b[j - 1]];
            int up = H[(i - 1) * ld + j] + GAP;
            int left = H[i * ld + j - 1] + GAP;
            int best = diag > up ? diag : up;
            H[i * ld + j] = best > left ? best : left;
        }
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    if (scale < 1) {
        fprintf(stderr, "usage: %s [scale>=1]\n", argv[0]);
        return 2;
    }
    int n = 3000 * scale, cap = n + n / 10;
    unsigned state = 12345u;
    unsigned char *a = malloc(n), *b = malloc(cap);
    if (!a || !b) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    random_bases(a, n, &state);
    int m = mutate(a, n, b, cap, &state);
    int *H = malloc(sizeof(int) * (size_t)(n + 1) * (size_t)(m + 1));
    if (!H) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    double t0 = now();
    score_matrix(a, n, b, m, H);
    double t1 = now();
    long matches = 0, mismatches = 0, gaps = 0;
    int i = n, j = m, ld = m + 1;
    while (i > 0 || j > 0) {
        if (i > 0 && j > 0 && H[i * ld + j] == H[(i - 1) * ld + j - 1] + subst[a[i - 1]][b[j - 1]]) {
            if (a[i - 1] == b[j - 1])
                matches++;
            else
                mismatches++;
            i--;
            j--;
        } else if (i > 0 && H[i * ld + j] == H[(i - 1) * ld + j] + GAP) {
            gaps++;
            i--;
        } else {
            gaps++;
            j--;
        }
    }
    long rowsum = 0;
    for (int r = 0; r <= n; r += 97)
        rowsum += H[r * ld + m];
    printf("ichecksum score %d\n", H[n * ld + m]);
    printf("ichecksum matches %ld\n", matches);
    printf("ichecksum mismatches %ld\n", mismatches);
    printf("ichecksum gaps %ld\n", gaps);
    printf("ichecksum lastcolumn %ld\n", rowsum);
    printf("time_s %.6f\n", t1 - t0);
    free(a);
    free(b);
    free(H);
    return 0;
}
