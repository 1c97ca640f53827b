/* progress_bar.h - vtctl's staging progress bar on stderr, drawn from
 * libvt's progress callback (the library itself prints nothing). */
#ifndef VTCTL_PROGRESS_BAR_H
#define VTCTL_PROGRESS_BAR_H

#include <stdbool.h>
#include <stdint.h>

typedef struct progress_bar {
    const char *device; /* "staging to DEVICE" */
    bool on;            /* stderr is a terminal */
    bool open;          /* a line is drawn and not yet ended */
    int last;           /* percent last drawn, -1 before the first */
} progress_bar;

/* A bar for staging onto device, drawn only when stderr is a terminal. */
void progress_bar_init(progress_bar *bar, const char *device);

/* vt_progress_fn: user is a progress_bar. */
void progress_bar_update(void *user, uint64_t done, uint64_t total, const char *tensor);

/* End a bar left unfinished (staging failed) with a newline. */
void progress_bar_end(progress_bar *bar);

#endif
