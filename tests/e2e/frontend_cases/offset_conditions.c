/* Loop conditions with the iterator offset by a constant, as unrolled and paired loops write
 * them: pairs 't + 1 < n' stepping by 2, a body unrolled by four 'i + 4 <= n' with its remainder
 * loop, a look-ahead '2 + i < n', a downward 'k - 1 >= 0'; run at every size from 0 to 9 (odd,
 * even, shorter than the offset). */
#include <stdio.h>

#define N 64

static void pairs(int n, const float *z, float *out)
{
    for (int t = 0; t + 1 < n; t += 2) {
        out[t] = z[t] * z[t + 1];
        out[t + 1] = z[t] - z[t + 1];
    }
}

static int unrolled(int n, const float *x, float *y)
{
    int i;
    for (i = 0; i + 4 <= n; i += 4) {
        y[i] = 2.0f * x[i];
        y[i + 1] = 2.0f * x[i + 1];
        y[i + 2] = 2.0f * x[i + 2];
        y[i + 3] = 2.0f * x[i + 3];
    }
    for (; i < n; i++)
        y[i] = -x[i];
    return i;
}

static void look_ahead(int n, const float *x, float *d)
{
    for (int i = 0; 2 + i < n; i++)
        d[i] = x[i + 2] - 2.0f * x[i + 1] + x[i];
}

static void downward(int n, const float *x, float *s)
{
    for (int k = n - 1; k - 1 >= 0; k--)
        s[k] = x[k] + x[k - 1];
}

int main(void)
{
    static float x[N], a[N], b[N], c[N], d[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)((i * 37) % 17) * 0.25f - 2.0f;
    for (int n = 0; n <= 9; n++) {
        for (int i = 0; i < N; i++)
            a[i] = b[i] = c[i] = d[i] = -1.0f;
        pairs(n, x, a);
        int last = unrolled(n, x, b);
        look_ahead(n, x, c);
        downward(n, x, d);
        double s = 0.0;
        for (int i = 0; i < 12; i++)
            s += (double)(a[i] + 3.0f * b[i] + 5.0f * c[i] + 7.0f * d[i]) * (i + 1);
        printf("n=%d last=%d %.6f\n", n, last, s);
    }
    return 0;
}
