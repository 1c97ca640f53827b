/* rocm_common.h - helpers shared by the rocm backend's op files: the queue
 * a kernel call runs on, the end of a call, operand sizes, and the checks
 * of data-dependent values (queued on the device, never read back). */
#ifndef VT_ROCM_COMMON_H
#define VT_ROCM_COMMON_H

#include "rocm_backend.h"
#include "rocm_launch.h"

/* One kernel call: where it runs. direct is a call that did not come
 * through enqueue (no queue in args): it runs on the device's internal
 * queue and waits for it, as a version-1 kernel did. */
typedef struct rocm_call {
    vt_backend_ctx *c;
    int dev;
    const vt_op_args *a;
    vt_backend_queue *q;
    hipStream_t s;
    bool direct;
} rocm_call;

/* Elements of an operand. */
int64_t vt_rocm_elems(const vt_operand *o);

/* Start a kernel call: make dev current, find its queue. */
vt_status vt_rocm_call_begin(vt_backend_ctx *c, int dev, const vt_op_args *a, rocm_call *L, char *why, size_t why_size);

/* End a kernel call: name a launch failure; a direct call waits and
 * returns the device's verdict. Never waits for an enqueued call. */
vt_status vt_rocm_done(const rocm_call *L, hipError_t e, const char *what, char *why, size_t why_size);

/* A check kernel was queued on L's queue: its error word must be read at
 * the next sync point. */
void vt_rocm_checked(const rocm_call *L);

/* Scratch of L's queue (at least bytes). */
vt_status vt_rocm_call_scratch(const rocm_call *L, uint64_t bytes, void **ptr, char *why, size_t why_size);

/* Prologue of every kernel: the call L_ and its stream s, or return. */
#define STREAM()                                                                                                       \
    rocm_call L_;                                                                                                      \
    vt_status st_ = vt_rocm_call_begin(c, dev, a, &L_, why, why_size);                                                 \
    if (st_ != VT_OK)                                                                                                  \
        return st_;                                                                                                    \
    hipStream_t s = L_.s

/* Family tables, assembled by rocm_kernels.c. */
extern const vt_kernel vt_rocm_kernels_basic[];
extern const uint32_t vt_rocm_n_kernels_basic;
extern const vt_kernel vt_rocm_kernels_nn[];
extern const uint32_t vt_rocm_n_kernels_nn;
extern const vt_kernel vt_rocm_kernels_quant[];
extern const uint32_t vt_rocm_n_kernels_quant;
extern const vt_kernel vt_rocm_kernels_select[];
extern const uint32_t vt_rocm_n_kernels_select;

#endif
