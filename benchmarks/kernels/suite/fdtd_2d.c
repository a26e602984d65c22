/* fdtd_2d: 2-D finite-difference time-domain (Yee) update of the fields ex, ey, hz, with a
 * source value fed into the first row of ey at every time step. */
#include "suite.h"

#ifdef SMALL
#define NX 40
#define NY 50
#define TMAX 10
#else
#define NX 1000
#define NY 1200
#define TMAX 100
#endif

void kernel_fdtd_2d(int tmax, int nx, int ny, double ex[NX][NY], double ey[NX][NY],
                    double hz[NX][NY], double fict[TMAX])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < tmax; t++) {
    for (j = 0; j < ny; j++)
      ey[0][j] = fict[t];
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
#ifdef OMP_FOR
#pragma omp parallel for private(j)
#endif
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}

static double ex[NX][NY], ey[NX][NY], hz[NX][NY], fict[TMAX];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < TMAX; i++)
    fict[i] = (double)i;
  for (i = 0; i < NX; i++)
    for (j = 0; j < NY; j++) {
      ex[i][j] = (double)(i * (j + 1) % NX) / NX;
      ey[i][j] = (double)(i * (j + 2) % NY) / NY;
      hz[i][j] = (double)(i * (j + 3) % NX) / NX;
    }

  t0 = suite_now();
  kernel_fdtd_2d(TMAX, NX, NY, ex, ey, hz, fict);
  suite_time(suite_now() - t0);

  suite_checksum("ex", &ex[0][0], (long)NX * NY);
  suite_checksum("ey", &ey[0][0], (long)NX * NY);
  suite_checksum("hz", &hz[0][0], (long)NX * NY);
  return 0;
}
