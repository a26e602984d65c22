/* multi_device.h: the API-independent part of mdpoly's --devices runtime, once per file.
 *
 * Which devices a split computation runs on (the --devices value compiled in, overridden by
 * MDPOLY_DEVICES at run time: "all", a count N or a list of device indices such as "0,1" or
 * "0,0"; a device listed twice gets two slots, each with its own context or queue), each slot's
 * share of the split dimension (MDPOLY_DEVICE_SHARES "w0,w1,...", else the devices' compute
 * units when they differ, else equal shares), the block of the split range a slot computes,
 * host staging buffers for outputs copied back whole, and MDPOLY_PROFILE: each split
 * computation's wall-clock time per call over all its devices, printed at exit. The API parts
 * (multi_device_opencl.h, multi_device_cuda.h) include it; compiles on its own
 * (tests/backends/test_c_files.py).
 */
#ifndef MDP_MD_COMMON
#define MDP_MD_COMMON
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#define MDP_MD_MAX 16
#define MDP_MD_MAX_OUTPUTS 32
#define MDP_MIN_LL(a, b) ((long long)(a) < (long long)(b) ? (long long)(a) : (long long)(b))
#define MDP_MAX_LL(a, b) ((long long)(a) > (long long)(b) ? (long long)(a) : (long long)(b))
static int mdp_md_n;                      /* slots in use (0 before initialization) */
static int mdp_md_index[MDP_MD_MAX];      /* each slot's device index */
static long long mdp_md_weight[MDP_MD_MAX]; /* each slot's share of a split dimension */
static int mdp_md_profile;
static void *mdp_md_stage_mem[MDP_MD_MAX][MDP_MD_MAX_OUTPUTS];
static size_t mdp_md_stage_cap[MDP_MD_MAX][MDP_MD_MAX_OUTPUTS];
static struct { const char *nest; long calls; int devices; double wall_ms; } mdp_md_prof[256];
static int mdp_md_nprof;

static void mdp_md_fail(const char *what, const char *value)
{
    fprintf(stderr, "mdpoly: devices error: %s%s%s\n", what, value ? ": " : "", value ? value : "");
    exit(1);
}

/* Fills the slots from 'spec' ("all", "N" or "i,j,..."): 'all' and N take the 'ncand' candidate
   devices 'cand' (indices), a list names indices below 'ntotal'. */
static void mdp_md_parse(const char *spec, int ntotal, const int *cand, int ncand)
{
    const char *c = spec;
    int digits = 1, n, i;
    if (!spec || !*spec)
        spec = c = "1";
    for (; *c; ++c)
        if (!isdigit((unsigned char)*c))
            digits = 0;
    if (strcmp(spec, "all") == 0 || digits) {
        n = digits ? atoi(spec) : ncand;
        if (n < 1 || n > ncand || n > MDP_MD_MAX) {
            fprintf(stderr, "mdpoly: devices error: %s device(s) asked for (\"%s\"), %d available, at most %d\n",
                    digits ? spec : "all", spec, ncand, MDP_MD_MAX);
            exit(1);
        }
        for (i = 0; i < n; ++i)
            mdp_md_index[i] = cand[i];
        mdp_md_n = n;
        return;
    }
    n = 0;
    for (c = spec; *c;) {
        char *end;
        long v = strtol(c, &end, 10);
        if (end == c || v < 0 || v >= ntotal || n == MDP_MD_MAX || (*end && *end != ','))
            mdp_md_fail("not 'all', a device count or a list of device indices (each below the number of devices)",
                        spec);
        mdp_md_index[n++] = (int)v;
        c = *end ? end + 1 : end;
    }
    if (n == 0)
        mdp_md_fail("no device listed", spec);
    mdp_md_n = n;
}

/* Each slot's weight: MDPOLY_DEVICE_SHARES, else 'units' (compute units) when they differ, else 1. */
static void mdp_md_weights(const long long *units)
{
    const char *s = getenv("MDPOLY_DEVICE_SHARES");
    int i, differ = 0;
    for (i = 0; i < mdp_md_n; ++i) {
        mdp_md_weight[i] = 1;
        if (units[i] != units[0])
            differ = 1;
    }
    if (s && *s) {
        const char *c = s;
        for (i = 0; i < mdp_md_n; ++i) {
            char *end;
            long long v = strtoll(c, &end, 10);
            if (end == c || v < 0 || v > 1000000 || (i + 1 < mdp_md_n ? *end != ',' : *end != '\0'))
                mdp_md_fail("MDPOLY_DEVICE_SHARES must be one integer weight (0..1000000) per device, comma-separated", s);
            mdp_md_weight[i] = v;
            c = end + 1;
        }
        for (i = 0; i < mdp_md_n && mdp_md_weight[i] == 0; ++i)
            ;
        if (i == mdp_md_n)
            mdp_md_fail("MDPOLY_DEVICE_SHARES gives every device a weight of 0", s);
    } else if (differ) {
        for (i = 0; i < mdp_md_n; ++i)
            mdp_md_weight[i] = units[i] > 0 ? units[i] : 1;
    }
    s = getenv("MDPOLY_PROFILE");
    mdp_md_profile = s && *s && strcmp(s, "0") != 0;
}

/* Slot d's block of [lo, lo + n): contiguous, in slot order, sized by the weights. */
static void mdp_md_block(long long lo, long long n, int d, long long *first, long long *count)
{
    long long total = 0, before = 0, a, b;
    int i;
    if (n < 0)
        n = 0;
    for (i = 0; i < mdp_md_n; ++i) {
        total += mdp_md_weight[i];
        if (i < d)
            before += mdp_md_weight[i];
    }
    a = (long long)((double)n * (double)before / (double)total);
    b = d + 1 == mdp_md_n ? n : (long long)((double)n * (double)(before + mdp_md_weight[d]) / (double)total);
    if (b > n)
        b = n;
    if (a > b)
        a = b;
    *first = lo + a;
    *count = b - a;
}

/* Output 'o''s host staging buffer of slot 'd', at least 'bytes' long (kept, grown as needed). */
static char *mdp_md_stage(int d, int o, size_t bytes)
{
    if (o >= MDP_MD_MAX_OUTPUTS)
        mdp_md_fail("too many outputs in one computation", NULL);
    if (!mdp_md_stage_mem[d][o] || mdp_md_stage_cap[d][o] < bytes) {
        free(mdp_md_stage_mem[d][o]);
        mdp_md_stage_mem[d][o] = malloc(bytes ? bytes : 1);
        mdp_md_stage_cap[d][o] = bytes;
        if (!mdp_md_stage_mem[d][o])
            mdp_md_fail("out of memory", NULL);
    }
    return (char *)mdp_md_stage_mem[d][o];
}

/* The reduction wrapper's buffers (the code --mpi shares with --devices calls it by this name). */
static void *mdp_mpi_alloc(long long count, size_t elem)
{
    void *p = malloc((size_t)(count > 0 ? count : 0) * elem + 1);
    if (!p)
        mdp_md_fail("out of memory", NULL);
    return p;
}

static void mdp_md_free_stages(void)
{
    int d, o;
    for (d = 0; d < MDP_MD_MAX; ++d)
        for (o = 0; o < MDP_MD_MAX_OUTPUTS; ++o)
            free(mdp_md_stage_mem[d][o]);
}

static double mdp_md_now(void)
{
    struct timeval tv;
    if (!mdp_md_profile)
        return 0.0;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec * 1e-3;
}

static void mdp_md_profile_report(void)
{
    int i;
    for (i = 0; i < mdp_md_nprof; ++i)
        fprintf(stderr, "mdpoly-devices: %s devices=%d calls=%ld wall_ms=%.6f\n", mdp_md_prof[i].nest,
                mdp_md_prof[i].devices, mdp_md_prof[i].calls, mdp_md_prof[i].wall_ms);
    fflush(stderr);
}

/* MDPOLY_PROFILE: one call of 'nest' took 'ms' of wall-clock time, from the first copy in to the
   last result gathered or combined on the host. */
static void mdp_md_profile_add(const char *nest, double ms)
{
    int slot;
    if (!mdp_md_profile)
        return;
    for (slot = 0; slot < mdp_md_nprof && strcmp(mdp_md_prof[slot].nest, nest) != 0; ++slot)
        ;
    if (slot == 256)
        return;
    if (slot == mdp_md_nprof) {
        if (mdp_md_nprof == 0)
            atexit(mdp_md_profile_report);
        mdp_md_prof[slot].nest = nest;
        ++mdp_md_nprof;
    }
    mdp_md_prof[slot].calls++;
    mdp_md_prof[slot].devices = mdp_md_n;
    mdp_md_prof[slot].wall_ms += ms;
}
#endif /* MDP_MD_COMMON */
