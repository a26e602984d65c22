/* Nests that write part of an array: the diagonal (L[i][i], one iterator in both subscripts), a
   strict lower triangle, and every other row. The elements they do not write must come back as
   they were, so each nest copies the array in before its kernel. */
#include <stdio.h>
#define N 45
static double L[N][N], R[N][N];
int main(void) {
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      L[i][j] = 0.25 * (i + 2 * j);
      R[i][j] = 1.0 / (1 + i + j);
    }
  for (i = 0; i < N; i++)
    L[i][i] = 1.0;
  for (i = 0; i < N; i++)
    for (j = 0; j < i; j++)
      R[i][j] = (double) ((i * 3 + j * 5) % 11);
  for (i = 0; i < N / 2; i++)
    for (j = 0; j < N; j++)
      R[2 * i][j] += L[i][j];
  double s = 0.0;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      s = s * 0.5 + L[i][j] + 3.0 * R[i][j];
  printf("%.12g %.12g %.12g\n", s, L[7][3], R[44][44]);
  return 0;
}
