/* C89 style: an index temporary declared at the top and assigned in a loop whose first
   statement is a recurrence (sequential) and whose second is independent. The scheduler may
   split such a loop into pieces printed as written: every piece must keep the assignment. */
#include <stdio.h>

#define N 400
static float a[2 * N + 2], b[N];

static void step(int n) {
    int i, c;
    for (i = 1; i < n; i++) {
        c = 2 * i;
        a[c] = a[c - 2] * 0.5f + 1.0f;
        b[i] = 3.0f * (float)i + a[c + 1];
    }
}

int main(void) {
    for (int i = 0; i < 2 * N + 2; i++) a[i] = (float)(i % 7);
    step(N);
    double s = 0.0;
    for (int i = 0; i < N; i++) s += b[i] + a[2 * i] * (i % 3);
    printf("%.4f %.4f %.4f\n", s, a[2 * N - 2], b[N - 1]);
    return 0;
}
