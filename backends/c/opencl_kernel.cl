/* opencl_kernel.cl: what the user's expressions may spell (after glibc's cpp) that OpenCL C lacks;
 * the start of every OpenCL kernel source (mdpoly.backends.opencl). Compiles on its own as OpenCL C 1.2.
 */
#ifndef INFINITY
#define INFINITY (1.0f / 0.0f)
#endif
#ifndef NAN
#define NAN (0.0f / 0.0f)
#endif
#ifndef __clang__
#define __builtin_inff() INFINITY
#define __builtin_inf() INFINITY
#define __builtin_huge_valf() INFINITY
#define __builtin_huge_val() INFINITY
#define __builtin_nanf(s) NAN
#define __builtin_nan(s) NAN
#endif
#define LLONG_MIN LONG_MIN
#define LLONG_MAX LONG_MAX
#define ULLONG_MAX ULONG_MAX
#define sqrtf sqrt
#define expf exp
#define logf log
#define fabsf fabs
#define sinf sin
#define cosf cos
#define tanhf tanh
#define powf pow
#define fminf fmin
#define fmaxf fmax
#define floorf floor
#define ceilf ceil
