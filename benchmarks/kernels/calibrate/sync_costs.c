/* sync_costs: the cost model's constants (mdpoly/cost_model.py, Calibration) measured.
 *
 * usage: sync_costs CALLS ELEMENTS
 * Times CALLS calls of a[i] = a[i] * 0.5 + 1 over ELEMENTS elements three ways and prints one
 * line: as an `omp parallel for` each (fork/join per call), as the steps of one parallel region
 * (`omp for`, a barrier per step), and sequentially; microseconds per call and nanoseconds per
 * element. Run with OMP_NUM_THREADS=T, quiet and with a busy process on one of the T cores
 * (benchmarks/never_slower.py --calibrate does both).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double a[1 << 22];

int main(int argc, char **argv)
{
  int calls = argc > 1 ? atoi(argv[1]) : 2000, n = argc > 2 ? atoi(argv[2]) : 1000, r, i;
  double t0, t1, t2, t3;
  if (n > (1 << 22))
    n = 1 << 22;
  t0 = omp_get_wtime();
  for (r = 0; r < calls; r++) {
#pragma omp parallel for schedule(static)
    for (i = 0; i < n; i++)
      a[i] = a[i] * 0.5 + 1.0;
  }
  t1 = omp_get_wtime();
#pragma omp parallel private(r)
  for (r = 0; r < calls; r++) {
#pragma omp for schedule(static)
    for (i = 0; i < n; i++)
      a[i] = a[i] * 0.5 + 1.0;
  }
  t2 = omp_get_wtime();
  for (r = 0; r < calls; r++) {
    for (i = 0; i < n; i++)
      a[i] = a[i] * 0.5 + 1.0;
    __asm__ volatile("" : : "r"(a) : "memory");
  }
  t3 = omp_get_wtime();
  printf("threads %d elements %d forkjoin_us %.3f region_step_us %.3f seq_us %.3f seq_ns_per_element %.4f\n",
         omp_get_max_threads(), n, (t1 - t0) / calls * 1e6, (t2 - t1) / calls * 1e6, (t3 - t2) / calls * 1e6,
         (t3 - t2) / calls / n * 1e9);
  return 0;
}
