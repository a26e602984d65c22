/* blur.c: the hot loop nests of the cmake_project example. */
#include "blur.h"

void blur(const float img[ROWS][COLS], float out[ROWS][COLS])
{
    for (int i = 1; i < ROWS - 1; i++)
        for (int j = 1; j < COLS - 1; j++)
            out[i][j] = (img[i - 1][j - 1] + img[i - 1][j] + img[i - 1][j + 1]
                         + img[i][j - 1] + img[i][j] + img[i][j + 1]
                         + img[i + 1][j - 1] + img[i + 1][j] + img[i + 1][j + 1]) / 9.0f;
}

void column_sums(const float out[ROWS][COLS], float s[COLS])
{
    for (int j = 0; j < COLS; j++)
        s[j] = 0.0f;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            s[j] += out[i][j];
}
