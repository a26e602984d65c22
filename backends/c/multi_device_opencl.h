/* multi_device_opencl.h: the OpenCL part of mdpoly's --devices runtime, once per file.
 *
 * Follows opencl_host.h and multi_device.h in the output. Every slot (a device listed twice
 * gets two) has a context and an in-order queue of its own, created at the first split call:
 * device indices count the devices of all platforms in order (as MDPOLY_OPENCL_DEVICE does);
 * "all" and a count N take the GPUs when there are any, else every device. Each slot builds its
 * own programs and keeps its own device buffers (released at exit). The slots' compute units
 * weigh their shares when they differ. MDPOLY_DEVICES_VERBOSE=1 prints the slots.
 */
#ifndef MDP_MD_OPENCL
#define MDP_MD_OPENCL
static cl_device_id mdp_md_cl_dev[MDP_MD_MAX];
static cl_context mdp_md_cl_ctx[MDP_MD_MAX];
static cl_command_queue mdp_md_cl_queue[MDP_MD_MAX];
static cl_program mdp_md_cl_programs[MDP_MD_MAX * 64];
static const char *mdp_md_cl_sources[MDP_MD_MAX * 64];
static int mdp_md_cl_program_slot[MDP_MD_MAX * 64];
static int mdp_md_cl_nprograms;
static cl_kernel mdp_md_cl_kernels[MDP_MD_MAX * 128];
static int mdp_md_cl_nkernels;
static cl_mem *mdp_md_cl_buffers[MDP_MD_MAX * 256];
static int mdp_md_cl_nbuffers;

static void mdp_md_cl_release(void)
{
    int i;
    for (i = 0; i < mdp_md_cl_nbuffers; ++i)
        if (*mdp_md_cl_buffers[i])
            clReleaseMemObject(*mdp_md_cl_buffers[i]);
    for (i = 0; i < mdp_md_cl_nkernels; ++i)
        clReleaseKernel(mdp_md_cl_kernels[i]);
    for (i = 0; i < mdp_md_cl_nprograms; ++i)
        clReleaseProgram(mdp_md_cl_programs[i]);
    for (i = 0; i < mdp_md_n; ++i) {
        clReleaseCommandQueue(mdp_md_cl_queue[i]);
        clReleaseContext(mdp_md_cl_ctx[i]);
    }
    mdp_md_cl_nbuffers = mdp_md_cl_nkernels = mdp_md_cl_nprograms = mdp_md_n = 0;
    mdp_md_free_stages();
}

/* The profile table at exit, unless opencl_host.h's runtime was started too (the plain code of a
   one-slot run, or a computation not split): its own exit handler prints the table then. */
static void mdp_md_cl_profile_report(void)
{
    if (!mdp_cl_device)
        mdp_cl_profile_report();
}

/* The slots from MDPOLY_DEVICES, else 'compiled' (the --devices value): contexts and queues. */
static void mdp_md_cl_init(const char *compiled)
{
    cl_uint nplat = 0, p, d;
    cl_platform_id plats[16];
    cl_device_id all[64];
    long long units[MDP_MD_MAX];
    int gpu[64], cand[64], ntotal = 0, ncand = 0, ngpu = 0, i;
    const char *spec = getenv("MDPOLY_DEVICES");
    cl_int err;
    if (mdp_md_n)
        return;
    if (!spec || !*spec)
        spec = compiled;
    err = clGetPlatformIDs(16, plats, &nplat);
    if (err == -1001 || (err == CL_SUCCESS && nplat == 0))
        mdp_md_fail("no OpenCL platform found; install an OpenCL driver (ICD) for your device", NULL);
    mdp_cl_check(err, "clGetPlatformIDs");
    if (nplat > 16)
        nplat = 16;
    for (p = 0; p < nplat; ++p) {
        cl_uint ndev = 0;
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, (cl_uint)(64 - ntotal), all + ntotal, &ndev);
        if (err == CL_DEVICE_NOT_FOUND)
            continue;
        mdp_cl_check(err, "clGetDeviceIDs");
        if (ndev > (cl_uint)(64 - ntotal))
            ndev = (cl_uint)(64 - ntotal);
        for (d = 0; d < ndev; ++d) {
            cl_device_type type = 0;
            mdp_cl_check(clGetDeviceInfo(all[ntotal], CL_DEVICE_TYPE, sizeof type, &type, NULL), "clGetDeviceInfo");
            gpu[ntotal] = (type & CL_DEVICE_TYPE_GPU) != 0;
            ngpu += gpu[ntotal];
            ++ntotal;
        }
    }
    for (i = 0; i < ntotal; ++i)
        if (gpu[i] || ngpu == 0)
            cand[ncand++] = i;
    if (ntotal == 0)
        mdp_md_fail("no OpenCL device found on any platform", NULL);
    mdp_md_parse(spec, ntotal, cand, ncand);
    for (i = 0; i < mdp_md_n; ++i) {
        cl_uint cu = 0;
        const char *prof = getenv("MDPOLY_PROFILE");
        int profile = prof && *prof && strcmp(prof, "0") != 0;
        mdp_md_cl_dev[i] = all[mdp_md_index[i]];
        mdp_md_cl_ctx[i] = clCreateContext(NULL, 1, &mdp_md_cl_dev[i], NULL, NULL, &err);
        mdp_cl_check(err, "clCreateContext");
        mdp_md_cl_queue[i] = clCreateCommandQueue(mdp_md_cl_ctx[i], mdp_md_cl_dev[i],
                                                  profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
        mdp_cl_check(err, "clCreateCommandQueue");
        mdp_cl_check(clGetDeviceInfo(mdp_md_cl_dev[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL),
                     "clGetDeviceInfo");
        units[i] = (long long)cu;
        if (getenv("MDPOLY_DEVICES_VERBOSE")) {
            char name[256] = "";
            clGetDeviceInfo(mdp_md_cl_dev[i], CL_DEVICE_NAME, sizeof name - 1, name, NULL);
            fprintf(stderr, "mdpoly: device slot %d: OpenCL device %d (%s, %u compute units)\n", i, mdp_md_index[i],
                    name, cu);
        }
    }
    mdp_md_weights(units);
    atexit(mdp_md_cl_release);
    if (mdp_md_profile)
        atexit(mdp_md_cl_profile_report);
}

/* Whether a split computation runs its plain one-device code (the function the build without
   --devices generates, on opencl_host.h's device): one slot, on the device that code chooses
   (MDPOLY_OPENCL_DEVICE, else the first GPU, else the first device); decided once. */
static int mdp_md_cl_plain(void)
{
    static int plain = -1;
    if (plain < 0) {
        plain = 0;
        if (mdp_md_n == 1) {
            mdp_cl_init();
            plain = mdp_cl_device == mdp_md_cl_dev[0];
        }
    }
    return plain;
}

/* Kernel 'kernel' of 'source' for slot d (the program built once per slot and source). */
static cl_kernel mdp_md_cl_kernel(int d, const char *source, const char *nest, const char *kernel)
{
    cl_program prog = NULL;
    cl_kernel k;
    cl_int err;
    int i;
    for (i = 0; i < mdp_md_cl_nprograms; ++i)
        if (mdp_md_cl_sources[i] == source && mdp_md_cl_program_slot[i] == d)
            prog = mdp_md_cl_programs[i];
    if (!prog) {
        prog = clCreateProgramWithSource(mdp_md_cl_ctx[d], 1, &source, NULL, &err);
        mdp_cl_check(err, "clCreateProgramWithSource");
        err = clBuildProgram(prog, 1, &mdp_md_cl_dev[d], "", NULL, NULL);
        if (err != CL_SUCCESS) {
            size_t size = 0;
            char *log;
            clGetProgramBuildInfo(prog, mdp_md_cl_dev[d], CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
            log = (char *)malloc(size + 1);
            if (log) {
                log[0] = '\0';
                clGetProgramBuildInfo(prog, mdp_md_cl_dev[d], CL_PROGRAM_BUILD_LOG, size, log, NULL);
                log[size] = '\0';
            }
            fprintf(stderr, "mdpoly: OpenCL error: clBuildProgram failed with error %d (%s) for the kernels of "
                    "'%s' on device slot %d; build log:\n%s\n", (int)err, mdp_cl_error_name(err), nest, d,
                    log ? log : "(none)");
            free(log);
            exit(1);
        }
        if (mdp_md_cl_nprograms == MDP_MD_MAX * 64)
            mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_md_cl_kernel (too many programs)");
        mdp_md_cl_sources[mdp_md_cl_nprograms] = source;
        mdp_md_cl_program_slot[mdp_md_cl_nprograms] = d;
        mdp_md_cl_programs[mdp_md_cl_nprograms++] = prog;
    }
    k = clCreateKernel(prog, kernel, &err);
    mdp_cl_check(err, "clCreateKernel");
    if (mdp_md_cl_nkernels == MDP_MD_MAX * 128)
        mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_md_cl_kernel (too many kernels)");
    mdp_md_cl_kernels[mdp_md_cl_nkernels++] = k;
    return k;
}

/* Slot d's device buffer of a nest, kept across calls, (re)created when 'bytes' exceeds '*cap'. */
static void mdp_md_cl_buffer(int d, cl_mem *mem, size_t *cap, size_t bytes, cl_mem_flags flags)
{
    cl_int err;
    if (bytes == 0)
        bytes = 1;
    if (*mem && bytes <= *cap)
        return;
    if (*mem) {
        mdp_cl_check(clReleaseMemObject(*mem), "clReleaseMemObject");
    } else {
        if (mdp_md_cl_nbuffers == MDP_MD_MAX * 256)
            mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_md_cl_buffer (too many buffers)");
        mdp_md_cl_buffers[mdp_md_cl_nbuffers++] = mem;
    }
    *mem = NULL;
    *cap = 0;
    *mem = clCreateBuffer(mdp_md_cl_ctx[d], flags, bytes, NULL, &err);
    mdp_cl_check(err, "clCreateBuffer");
    *cap = bytes;
}
#endif /* MDP_MD_OPENCL */
