/* blur.h: sizes and kernels of the cmake_project example. */
#ifndef BLUR_H
#define BLUR_H

#define ROWS 120
#define COLS 80

/* out = 3x3 box blur of img over the interior (borders untouched). */
void blur(const float img[ROWS][COLS], float out[ROWS][COLS]);

/* Column sums of out into s. */
void column_sums(const float out[ROWS][COLS], float s[COLS]);

#endif
