/* bench_time.c - the clock and the statistics of `vtctl bench`. */
#include "config.h"

#include "bench_time.h"

#include <stdlib.h>
#include <time.h>

double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *t, int n, double *min)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *min = t[0];
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}
