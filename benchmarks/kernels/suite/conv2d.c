/* conv2d: 2-D convolution (cross-correlation) of an image with a 5 x 5 filter, valid region. */
#include "suite.h"

#ifdef SMALL
#define H 40
#define W 50
#else
#define H 3600
#define W 4000
#endif
#define R 5

void kernel_conv2d(int h, int w, double img[H][W], double filt[R][R], double out[H - R + 1][W - R + 1])
{
  int i, j, di, dj;

#pragma scop
#ifdef OMP_FOR
#pragma omp parallel for private(j, di, dj)
#endif
  for (i = 0; i <= h - R; i++)
    for (j = 0; j <= w - R; j++) {
      out[i][j] = 0.0;
      for (di = 0; di < R; di++)
        for (dj = 0; dj < R; dj++)
          out[i][j] += filt[di][dj] * img[i + di][j + dj];
    }
#pragma endscop
}

static double img[H][W], filt[R][R], out[H - R + 1][W - R + 1];

int main(void)
{
  int i, j;
  double t0;

  for (i = 0; i < H; i++)
    for (j = 0; j < W; j++)
      img[i][j] = (double)((i * 3 + j * 5) % 64) / 64.0;
  for (i = 0; i < R; i++)
    for (j = 0; j < R; j++)
      filt[i][j] = (double)(i + 2 * j + 1) / 20.0;

  t0 = suite_now();
  kernel_conv2d(H, W, img, filt, out);
  suite_time(suite_now() - t0);

  suite_checksum("out", &out[0][0], (long)(H - R + 1) * (W - R + 1));
  return 0;
}
