/* mdp_team.h: the team size of mdpoly's parallel regions, chosen at run time; once per OpenMP file.
 *
 * mdp_team() = min(omp_get_max_threads(), cores not taken by other runnable tasks), at least 1;
 * mdp_team_upto(n) the same, at most n; 1 inside a parallel region where a nested one could not be
 * active (OMP_MAX_ACTIVE_LEVELS, 1 by default): a guard "mdp_team() > 1" then runs the nest as written. On Linux the runnable tasks are the "R" of /proc/loadavg's
 * fourth field "R/T" (system-wide, the calling thread included), the cores omp_get_num_procs() (the
 * affinity mask). A team no larger than the free cores keeps every barrier from waiting for a
 * scheduler tick while another process holds a core (the cost model prices synchronization quiet).
 *
 * Our own threads: the caller counts in R; libgomp's workers do too while they spin after a
 * region (a few ms by default, for ever under OMP_WAIT_POLICY=active), not once they sleep. So R
 * at a read may hold up to max-1 of our workers (max: omp_get_max_threads(); any region of the
 * program may have started them, the program's own pragmas included, whatever team this helper
 * returned last). Their share is measured, not guessed: the process's CPU time over the wall time
 * since the last read, less the caller's 1, is the average number of our workers running in that
 * interval, at most max-1; it is subtracted from R (rounded to nearest). Back-to-back regions
 * (workers running or spinning throughout) subtract what they run, a program whose workers slept
 * subtracts 0. (Capping it at the team returned last made a team of 1 stick: the workers still
 * spinning from earlier regions then counted as other processes at every later read.)
 *
 * The reading is cached per thread for MDP_TEAM_PERIOD seconds (5 ms): a call costs a clock read
 * (tens of ns); a read, fopen/fread/fclose of /proc/loadavg and clock(), a few us. Where the file cannot be read
 * (not Linux, no /proc) the result is omp_get_max_threads(). MDP_LOADAVG names the file and
 * MDP_TEAM_CPU_NOW the process-CPU-time function (tests point them at their own). Compiles on its own (tests/backends/test_c_files.py).
 */
#ifndef MDP_TEAM_H
#define MDP_TEAM_H
#include <omp.h>
#ifndef MDP_LOADAVG
#define MDP_LOADAVG "/proc/loadavg"
#endif
#define MDP_TEAM_PERIOD 0.005
#if defined(__linux__)
#include <stdio.h>
#include <time.h>
#endif
#if defined(__GNUC__) || defined(__clang__)
#define MDP_TLS __thread
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define MDP_TLS _Thread_local
#else
#define MDP_TLS
#endif

static MDP_TLS double mdp_team_at = -1.0; /* wall time of this thread's last read */
static MDP_TLS double mdp_team_cpu;       /* the process's CPU time then */
static MDP_TLS int mdp_team_free;         /* cores free at the last read (0: not read) */

#if defined(__linux__)
/* R of /proc/loadavg's "R/T", or -1. */
static inline int mdp_team_runnable(void) {
  char buf[128];
  FILE *f = fopen(MDP_LOADAVG, "r");
  if (f == NULL)
    return -1;
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  if (got == 0)
    return -1;
  buf[got] = 0;
  int field = 0;
  const char *p = buf;
  while (*p && field < 3) { /* past three load averages */
    while (*p == ' ')
      p++;
    while (*p && *p != ' ')
      p++;
    field++;
  }
  while (*p == ' ')
    p++;
  if (*p < '0' || *p > '9')
    return -1;
  int r = 0;
  while (*p >= '0' && *p <= '9')
    r = r * 10 + (*p++ - '0');
  return *p == '/' ? r : -1;
}

#ifndef MDP_TEAM_CPU_NOW /* tests name a clock of their own */
#define MDP_TEAM_CPU_NOW mdp_team_cpu_now
#endif
static inline double mdp_team_cpu_now(void) {
  clock_t c = clock(); /* the process's CPU time, all threads (glibc) */
  return c == (clock_t)-1 ? -1.0 : (double)c / CLOCKS_PER_SEC;
}
#endif

static inline int mdp_team_upto(int most) {
  /* inside a parallel region (the user's, or a region of ours around a call) a new region
   * could not be active: one thread, so the nest as written runs where that is cheaper */
  if (omp_get_active_level() >= omp_get_max_active_levels())
    return 1;
  int threads = omp_get_max_threads();
  int max = threads;
  if (most > 0 && most < max)
    max = most;
  if (max <= 1)
    return 1;
#if defined(__linux__)
  double now = omp_get_wtime();
  if (mdp_team_at < 0.0 || now - mdp_team_at >= MDP_TEAM_PERIOD) {
    int r = mdp_team_runnable();
    double cpu = MDP_TEAM_CPU_NOW();
    int ours = 0; /* our workers counted in r: running on average since the last read */
    if (mdp_team_at >= 0.0 && cpu >= 0.0 && now > mdp_team_at) {
      double busy = (cpu - mdp_team_cpu) / (now - mdp_team_at) - 1.0;
      ours = (int)(busy + 0.5);
      if (ours < 0)
        ours = 0;
      if (ours > threads - 1)
        ours = threads - 1;
    }
    int procs = omp_get_num_procs();
    int others = r - 1 - ours;
    mdp_team_free = r < 0 ? 0 : procs - (others > 0 ? others : 0);
    if (r >= 0 && mdp_team_free < 1)
      mdp_team_free = 1;
    mdp_team_at = now;
    mdp_team_cpu = cpu;
  }
  if (mdp_team_free > 0 && mdp_team_free < max)
    max = mdp_team_free;
#endif
  return max;
}

static inline int mdp_team(void) { return mdp_team_upto(0); }

/* mdp_tile_share(points, most, least, others, team): the step of a parallel tile loop over
 * `points` points whose static schedule gives each of `team` threads an even share. `others` is
 * the tile count of the loops collapsed with it; a thread's block of the collapsed loop holds at
 * most ceil(tiles * others / team) tiles of `size` points, and the size that makes this least
 * wins: among `most` (the size the tile's local buffers have) and ceil(points / c) for tile
 * counts c from ceil(points / most) on, c up to team more; ties to the larger size (fewer
 * tiles); at least `least` (a register block). 148 rows in tiles of 64 were 128 rows for one of
 * two threads and 20 for the other; in tiles of 37, 74 each. */
static inline long mdp_tile_share(long points, long most, long least, long others, int team) {
  if (most < 1)
    most = 1;
  if (points <= 0 || team <= 1)
    return most;
  if (others < 1)
    others = 1;
  long best = most;
  long best_load = ((points + most - 1) / most * others + team - 1) / team * most;
  long first = (points + most - 1) / most;
  for (long c = first; c <= first + team && c <= points; c++) {
    long size = (points + c - 1) / c;
    if (size < least)
      size = least;
    if (size > most)
      size = most;
    long load = ((points + size - 1) / size * others + team - 1) / team * size;
    if (load < best_load || (load == best_load && size > best)) {
      best = size;
      best_load = load;
    }
  }
  return best;
}
#endif
