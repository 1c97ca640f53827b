/* bench_time.h - the clock and the statistics `vtctl bench` reports: a
 * monotonic microsecond clock and the median and minimum of a run of
 * timings. */
#ifndef VTCTL_BENCH_TIME_H
#define VTCTL_BENCH_TIME_H

/* Microseconds on the monotonic clock. */
double bench_now_us(void);

/* Sort t[0..n) (n >= 1) in place and return its median (the mean of the
 * middle two for even n); *min gets the smallest. */
double bench_median(double *t, int n, double *min);

#endif
