/* multi_device_cuda.h: the CUDA part of mdpoly's --devices runtime, once per file.
 *
 * Follows cuda_host.h and multi_device.h in the output. Every slot (a device listed twice gets
 * two) has the device's primary context (retained once per slot: a device listed twice shares
 * it) and a non-blocking stream of its own, created at the first split call; "all" and a count N
 * take every CUDA device. Each slot loads its own modules (mdp_cu_module, compiled for the
 * slot's device) and keeps its own device buffers; copies in and launches are asynchronous on the
 * slot's stream, so the slots' kernels run concurrently. The slots' multiprocessor counts weigh
 * their shares when they differ. MDPOLY_PROFILE: five events per slot around its copies in, its
 * launches and its copies out, summed per nest and slot ("<nest>#<slot>") in cuda_host.h's
 * profile. MDPOLY_DEVICES_VERBOSE=1 prints the slots.
 */
#ifndef MDP_MD_CUDA
#define MDP_MD_CUDA
static CUdevice mdp_md_cu_dev[MDP_MD_MAX];
static CUcontext mdp_md_cu_ctx[MDP_MD_MAX];
static CUstream mdp_md_cu_stream[MDP_MD_MAX];
static CUevent mdp_md_cu_ev[MDP_MD_MAX][5];

static void mdp_md_cu_release(void)
{
    int i, e;
    for (i = 0; i < mdp_md_n; ++i) {
        cuCtxSetCurrent(mdp_md_cu_ctx[i]);
        for (e = 0; e < 5; ++e)
            if (mdp_md_cu_ev[i][e])
                cuEventDestroy(mdp_md_cu_ev[i][e]);
        cuStreamDestroy(mdp_md_cu_stream[i]);
        cuDevicePrimaryCtxRelease(mdp_md_cu_dev[i]);
    }
    mdp_md_n = 0;
    mdp_md_free_stages();
}

/* The slots from MDPOLY_DEVICES, else 'compiled' (the --devices value): contexts and streams. */
static void mdp_md_cu_init(const char *compiled)
{
    const char *spec = getenv("MDPOLY_DEVICES");
    int count = 0, i, e, cand[MDP_MD_MAX * 4];
    long long units[MDP_MD_MAX];
    if (mdp_md_n)
        return;
    if (!spec || !*spec)
        spec = compiled;
    mdp_cu_init();   /* cuInit, the runtime's own device (modules, profile table) */
    mdp_cu_check(cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count > MDP_MD_MAX * 4)
        count = MDP_MD_MAX * 4;
    for (i = 0; i < count; ++i)
        cand[i] = i;
    mdp_md_parse(spec, count, cand, count);
    for (i = 0; i < mdp_md_n; ++i) {
        int sms = 0;
        mdp_cu_check(cuDeviceGet(&mdp_md_cu_dev[i], mdp_md_index[i]), "cuDeviceGet");
        mdp_cu_check(cuDevicePrimaryCtxRetain(&mdp_md_cu_ctx[i], mdp_md_cu_dev[i]), "cuDevicePrimaryCtxRetain");
        mdp_cu_check(cuCtxSetCurrent(mdp_md_cu_ctx[i]), "cuCtxSetCurrent");
        mdp_cu_check(cuStreamCreate(&mdp_md_cu_stream[i], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        if (mdp_cu_profile)
            for (e = 0; e < 5; ++e)
                mdp_cu_check(cuEventCreate(&mdp_md_cu_ev[i][e], CU_EVENT_DEFAULT), "cuEventCreate");
        mdp_cu_check(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, mdp_md_cu_dev[i]),
                     "cuDeviceGetAttribute");
        units[i] = sms;
        if (getenv("MDPOLY_DEVICES_VERBOSE")) {
            char name[256] = "";
            cuDeviceGetName(name, (int)sizeof name - 1, mdp_md_cu_dev[i]);
            fprintf(stderr, "mdpoly: device slot %d: CUDA device %d (%s, %d multiprocessors)\n", i, mdp_md_index[i],
                    name, sms);
        }
    }
    mdp_cu_check(cuCtxSetCurrent(mdp_cu_context), "cuCtxSetCurrent");
    mdp_md_weights(units);
    atexit(mdp_md_cu_release);
}

/* Makes slot d's context current. */
static void mdp_md_cu_use(int d)
{
    mdp_cu_check(cuCtxSetCurrent(mdp_md_cu_ctx[d]), "cuCtxSetCurrent");
}

/* Whether a split computation runs its plain one-device code (the function the build without
   --devices generates): one slot, on the runtime's own device (MDPOLY_CUDA_DEVICE, else 0). */
static int mdp_md_cu_plain(void)
{
    return mdp_md_n == 1 && mdp_md_cu_dev[0] == mdp_cu_device;
}

/* Makes the runtime's own context current again (after a split call). */
static void mdp_md_cu_done(void)
{
    mdp_cu_check(cuCtxSetCurrent(mdp_cu_context), "cuCtxSetCurrent");
}

/* The module of 'source' for slot d's device, loaded in its context. */
static CUmodule mdp_md_cu_module(int d, const char *source, const char *nest, int fmad)
{
    CUdevice own = mdp_cu_device;
    CUmodule mod;
    mdp_cu_device = mdp_md_cu_dev[d];   /* mdp_cu_module compiles for mdp_cu_device */
    mdp_md_cu_use(d);
    mod = mdp_cu_module(source, nest, fmad);
    mdp_cu_device = own;
    return mod;
}

static void mdp_md_cu_record(int d, int which)
{
    mdp_cu_check(cuEventRecord(mdp_md_cu_ev[d][which], mdp_md_cu_stream[d]), "cuEventRecord");
}

static float mdp_md_cu_elapsed(int d, int from, int to)
{
    float ms = 0.0f;
    mdp_cu_check(cuEventElapsedTime(&ms, mdp_md_cu_ev[d][from], mdp_md_cu_ev[d][to]), "cuEventElapsedTime");
    return ms;
}

/* Adds one call of 'nest' on slot d (its events complete) to cuda_host.h's profile table. */
static void mdp_md_cu_profile_add(int d, const char *nest)
{
    int slot;
    mdp_cu_check(cuEventSynchronize(mdp_md_cu_ev[d][4]), "cuEventSynchronize");
    for (slot = 0; slot < mdp_cu_nprof && strcmp(mdp_cu_prof[slot].nest, nest) != 0; ++slot)
        ;
    if (slot == MDP_CU_MAX_MODULES)
        mdp_cu_check(CUDA_ERROR_OUT_OF_MEMORY, "mdp_md_cu_profile_add (too many nests)");
    if (slot == mdp_cu_nprof) {
        mdp_cu_prof[slot].nest = nest;
        ++mdp_cu_nprof;
    }
    mdp_cu_prof[slot].calls++;
    mdp_cu_last.kernel_ms = mdp_md_cu_elapsed(d, 1, 2);
    mdp_cu_last.transfer_ms = mdp_md_cu_elapsed(d, 0, 1) + mdp_md_cu_elapsed(d, 3, 4);
    mdp_cu_last.call_ms = mdp_md_cu_elapsed(d, 0, 4);
    mdp_cu_prof[slot].kernel_ms += mdp_cu_last.kernel_ms;
    mdp_cu_prof[slot].transfer_ms += mdp_cu_last.transfer_ms;
}
#endif /* MDP_MD_CUDA */
