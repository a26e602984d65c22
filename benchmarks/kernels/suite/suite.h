/* suite.h: timing and checksum output shared by the benchmark-suite kernels (benchmarks/suite.py).
 *
 * A kernel program prints, on stdout,
 *     time_s <seconds of the timed kernel call(s)>
 *     checksum <name> <sum> <weighted sum> <sum of absolute values>
 * one checksum line per output array. The weighted sum (weights 1..7 by position) catches
 * permuted outputs; the sum of absolute values scales the comparison's tolerance, so that a
 * reassociated reduction's rounding errors are not magnified by cancellation in the sums.
 */
#ifndef SUITE_H
#define SUITE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double suite_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void suite_time(double seconds)
{
  printf("time_s %.9f\n", seconds);
}

static void suite_checksum(const char *name, const double *v, long n)
{
  double s = 0.0, w = 0.0, m = 0.0;
  long k;
  for (k = 0; k < n; k++) {
    s += v[k];
    w += v[k] * (double)(k % 7 + 1);
    m += fabs(v[k]);
  }
  printf("checksum %s %.17g %.17g %.17g\n", name, s, w, m);
}

#endif
