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
/* C's float functions convert an integer argument to float, where OpenCL's overloads are ambiguous */
#define sqrtf(x) sqrt((float)(x))
#define expf(x) exp((float)(x))
#define logf(x) log((float)(x))
#define fabsf(x) fabs((float)(x))
#define sinf(x) sin((float)(x))
#define cosf(x) cos((float)(x))
#define tanhf(x) tanh((float)(x))
#define powf(x, y) pow((float)(x), (float)(y))
#define fminf(x, y) fmin((float)(x), (float)(y))
#define fmaxf(x, y) fmax((float)(x), (float)(y))
#define floorf(x) floor((float)(x))
#define ceilf(x) ceil((float)(x))
