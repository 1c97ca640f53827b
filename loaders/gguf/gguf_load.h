/* gguf_load.h - the planning and staging half of the GGUF loader
 * (internal to libvt). */
#ifndef VT_GGUF_LOAD_H
#define VT_GGUF_LOAD_H

#include <vt/vt.h>

#include <vt/vt_load.h>

struct vt_load_plan {
    vt_gguf *g; /* borrowed */
    vt_device *dev;
    vt_load_options options;
    size_t n;
    const vt_gguf_tensor **tensors; /* file order */
    vt_weight_desc *descs;
    vt_weight_plan *decisions;
    vt_fit_report report;
    vt_run_estimate run;
    size_t misaligned; /* tensors whose data is not at their type's alignment: then none is used in place */
    vt_status verdict; /* VT_OK or VT_E_DOES_NOT_FIT */
    char *message;     /* the refusal, "" when it fits */
};

/* Fill out from g's metadata for ctx and batch (ctx 0: all zero). */
vt_status vt_gguf_run_estimate(const vt_gguf *g, uint64_t ctx, uint64_t batch, vt_run_estimate *out);

/* Options with every default filled in (NULL: all defaults). */
vt_status vt_load_options_resolve(const vt_load_options *in, vt_load_options *out);

#endif
