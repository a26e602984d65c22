/* cuda_kernel.h: names the plan and the user's expressions may use that NVRTC does not predefine
 * (OpenCL's short unsigned type names, limits.h/math.h constants, glibc's builtin spellings of
 * INFINITY and NAN as bit patterns, so that nvcc compiles the same source); the start of every
 * CUDA kernel source (mdpoly.backends.cuda). Compiles on its own under NVRTC.
 */
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF INFINITY
#endif
#define __builtin_inff() __int_as_float(0x7f800000)
#define __builtin_inf() __longlong_as_double(0x7ff0000000000000LL)
#define __builtin_huge_valf() __int_as_float(0x7f800000)
#define __builtin_huge_val() __longlong_as_double(0x7ff0000000000000LL)
#define __builtin_nanf(s) __int_as_float(0x7fffffff)
#define __builtin_nan(s) __longlong_as_double(0x7ff8000000000000LL)
#ifndef INT_MAX
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-9223372036854775807L - 1)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MIN (-9223372036854775807LL - 1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282347e+38F
#define FLT_MIN 1.17549435e-38F
#define DBL_MAX 1.7976931348623157e+308
#define DBL_MIN 2.2250738585072014e-308
#endif
