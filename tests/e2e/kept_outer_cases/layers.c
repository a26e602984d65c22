/* Nests inside outer loops that stay as written: each is analysed on its own. */
#include <stdio.h>
#define N 300
struct net { int layers; int active[8]; float scale[8]; };
static float A[N][N], B[N][N];
static int idx[N];
static float h[N];

/* the time loop's bound is a struct member and its body holds the sweeps under an 'if' */
void layers(struct net *p) {
  for (int l = 0; l < p->layers; l++) {
    float sc = p->scale[l];
    if (p->active[l]) {
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
          B[i][j] = A[i][j] * sc + (float)l;
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
          A[i][j] = 0.5f * (A[i][j] + B[i][j]);
    }
  }
}

/* the outer loop holds a data-dependent histogram (kept: its reason is inside that nest) and a sweep */
void mixed(int T) {
  for (int t = 0; t < T; t++) {
    int k = 0;
    while (k < 2) {
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
          B[i][j] = B[i][j] + A[j][i] * 0.25f;
      k++;
    }
    for (int i = 0; i < N; i++)
      h[idx[i]] += 1.0f;
  }
}

/* kept for a reason inside its first nest (which that reason explains); the sweep under 'if' is analysed */
void culprit(int T, int c) {
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < N; i++)
      h[idx[i]] += 2.0f;
    if (c > t)
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
          A[i][j] = A[i][j] * 0.75f + h[j];
  }
}

int main(void) {
  struct net p = {3, {1, 0, 1}, {0.5f, 2.0f, 0.25f}};
  for (int i = 0; i < N; i++) {
    idx[i] = (i * 7) % N; h[i] = 0;
    for (int j = 0; j < N; j++) { A[i][j] = (float)((i * 5 + j) % 17); B[i][j] = (float)((i + j) % 3); }
  }
  layers(&p); mixed(2); culprit(3, 2);
  double s = 0;
  for (int i = 0; i < N; i++) {
    s += h[i];
    for (int j = 0; j < N; j++) s += A[i][j] + 3.0 * B[i][j];
  }
  printf("%.9e %.6e %.6e\n", s, (double)A[3][4], (double)B[5][6]);
  return 0;
}
