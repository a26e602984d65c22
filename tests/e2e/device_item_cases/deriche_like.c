#include <math.h>
#include <stdio.h>
#define W 30
#define H 26
static float imgIn[W][H], yA[W][H], yB[W][H];
static void kernel_deriche(int w, int h, float a1, float a2, float b1, float b2) {
  int i, j;
  float ym1, ym2, xm1, yp1, yp2, xp1, xp2, tp1, tp2;
  for (i = 0; i < w; i++) {
    ym1 = 0.0f;
    ym2 = 0.0f;
    xm1 = 0.0f;
    for (j = 0; j < h; j++) {
      yA[i][j] = a1 * imgIn[i][j] + a2 * xm1 + b1 * ym1 + b2 * ym2;
      xm1 = imgIn[i][j];
      ym2 = ym1;
      ym1 = yA[i][j];
    }
  }
  for (j = 0; j < h; j++) {
    tp1 = 0.0f;
    tp2 = 0.0f;
    yp1 = 0.0f;
    yp2 = 0.0f;
    for (i = w - 1; i >= 0; i--) {
      yB[i][j] = a1 * tp1 + a2 * tp2 + b1 * yp1 + b2 * yp2 + sqrtf(fabsf(yA[i][j]));
      tp2 = tp1;
      tp1 = yA[i][j];
      yp2 = yp1;
      yp1 = yB[i][j];
    }
  }
  xp1 = ym1 + yp1;   /* the last iterations' temporaries are read after the nests */
  xp2 = xp1 * 0.5f;
  yB[0][0] += xp2;
}
int main(void) {
  int i, j;
  for (i = 0; i < W; i++) for (j = 0; j < H; j++) imgIn[i][j] = (float)((313 * i + 991 * j) % 65536) / 65535.0f;
  kernel_deriche(W, H, 0.25f, -0.125f, 0.5f, -0.0625f);
  for (i = 0; i < W; i++) for (j = 0; j < H; j++) printf("%.9g %.9g\n", yA[i][j], yB[i][j]);
  return 0;
}
