#include <stdio.h>
#define NX 300
#define NY 320
#define TMAX 5
static double ex[NX][NY], ey[NX][NY], hz[NX][NY], fict[TMAX];
static int kernel_fdtd(int tmax, int nx, int ny) {
  int t, i, j;
  for (t = 0; t < tmax; t++) {
    for (j = 0; j < ny; j++)
      ey[0][j] = fict[t];
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i-1][j]);
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j-1]);
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]);
  }
  return i * 1000 + j;   /* the iterators' exit values */
}
int main(void) {
  int i, j, r;
  for (i = 0; i < TMAX; i++) fict[i] = (double)i;
  for (i = 0; i < NX; i++)
    for (j = 0; j < NY; j++) {
      ex[i][j] = ((double)i * (j + 1)) / NX;
      ey[i][j] = ((double)i * (j + 2)) / NY;
      hz[i][j] = ((double)i * (j + 3)) / NX;
    }
  r = kernel_fdtd(TMAX, NX, NY);
  printf("%d\n", r);
  for (i = 0; i < NX; i += 7) for (j = 0; j < NY; j += 3) printf("%.15g %.15g %.15g\n", ex[i][j], ey[i][j], hz[i][j]);
  return 0;
}
