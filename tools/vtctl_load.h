/* vtctl_load.h - what `vtctl fit` and `vtctl stage` share: their options
 * and opening the file, the registry and the device. */
#ifndef VT_VTCTL_LOAD_H
#define VT_VTCTL_LOAD_H

#include "vtctl.h"

#define VTCTL_MAX_CLASSES 256

typedef struct vtctl_load_args {
    const char *file;
    const char *backend; /* "rocm", "rocm:0"; NULL: the first staging device, else cpu:0 */
    bool json;
    bool verify; /* stage: read every tensor back and compare */
    vt_load_options options;
    vt_tensor_class classes[VTCTL_MAX_CLASSES]; /* --class TENSOR=CLASS (options.classes points here) */
} vtctl_load_args;

/* A byte count: decimal digits with an optional K/M/G/T suffix (powers
 * of 1024, "KiB" and "KB" read alike), no sign, no overflow; false (and
 * *out untouched) otherwise. */
bool vtctl_parse_bytes(const char *s, uint64_t *out);

/* Parse the shared options; returns -1 to go on, else the exit code. */
int vtctl_load_parse(const char *cmd, int argc, char **argv, vtctl_load_args *a);

/* Open the registry, the file and the device; VTCTL_EXIT_OK or an exit
 * code after printing why. On success the caller closes all three. */
int vtctl_load_open(const vtctl_load_args *a, vt_registry **reg, vt_gguf **g, vt_device **dev);

/* `vtctl fit FILE --devices A,B,...`: plan the runner's layer split
 * (fit_split.c); expand is a VT_EXPAND_* or -1 (from the file). */
int vtctl_fit_split(const vtctl_load_args *a, int expand, const char *devices);

/* After a refusal on dev_id: print the split over dev_id and cpu:0 that
 * would fit, when one does (prints nothing otherwise). */
void vtctl_fit_split_hint(const vtctl_load_args *a, int expand, const char *dev_id);

/* Find the devices of "A,B,..." (at most VT_RUNNER_MAX_DEVICES) in reg;
 * VTCTL_EXIT_OK, or an exit code after printing why. */
int vtctl_parse_devices(vt_registry *reg, const char *cmd, const char *list, vt_device **devs, uint32_t *n);

#endif
