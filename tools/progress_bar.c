/* progress_bar.c - vtctl's staging progress bar (see progress_bar.h). */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "progress_bar.h"

#define WIDTH 30

void progress_bar_init(progress_bar *bar, const char *device)
{
    bar->device = device;
    bar->on = isatty(2);
    bar->open = false;
    bar->last = -1;
}

void progress_bar_update(void *user, uint64_t done, uint64_t total, const char *tensor)
{
    progress_bar *bar = user;
    (void)tensor;
    if (!bar->on || !total)
        return;
    int pct = (int)(done * 100 / total);
    if (pct == bar->last && done != total)
        return;
    bar->last = pct;
    int fill = pct * WIDTH / 100;
    fprintf(stderr, "\rstaging to %s [%.*s%*s] %3d%%", bar->device, fill,
            "==============================", WIDTH - fill, "", pct);
    bar->open = done != total;
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

void progress_bar_end(progress_bar *bar)
{
    if (bar->open)
        fputc('\n', stderr);
    bar->open = false;
}
