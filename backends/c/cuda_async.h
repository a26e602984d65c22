/* cuda_async.h: the asynchronous __global -> __shared__ copies of double-buffered tiles
 * (GpuParams.async_copy), after cuda_kernel.h in a kernel source that uses them
 * (mdpoly.backends.cuda). Compiled for sm_80 or newer they are cp.async (4- and 8-byte chunks
 * through L1, 16-byte chunks bypassing it) with commit/wait groups; for an older architecture a
 * plain load and store, and the group operations do nothing, so the same source is correct there.
 * dst and src are aligned to the chunk's size (the kernels test the global address at run time).
 */
template <typename T> __device__ __forceinline__ void mdp_async_copy(T *dst, const T *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned mdp_at = (unsigned)__cvta_generic_to_shared(dst);
    if (sizeof(T) == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(mdp_at), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" :: "r"(mdp_at), "l"(src), "n"((int)sizeof(T)) : "memory");
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void mdp_async_commit(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mdp_async_wait_prior(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mdp_async_wait_all(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}
