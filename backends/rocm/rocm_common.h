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

/* Length of the last axis of o (1 for a scalar). */
static inline int64_t vt_rocm_last_dim(const vt_operand *o)
{
    return o->ndim ? o->shape[o->ndim - 1] : 1;
}

/* Block geometry of a dtype from the type table: elements and bytes a block. */
static inline void vt_rocm_geometry(uint32_t dtype, int *be, int *bb)
{
    const vt_dtype_info *t = vt_dtype_get(dtype);
    *be = (int)t->block_elems;
    *bb = (int)t->block_bytes;
}

/* Queue the check of n slots (each -1 or in [0, limit), unique when asked;
 * with accepted, accepted[b] in [1, acc_max] where slots[b] >= 0) and
 * return the safe slots the guarded kernel must use. */
hipError_t vt_rocm_check_slots(const rocm_call *L, const void *slots, int64_t n, int64_t limit, bool unique,
                               const void *accepted, int64_t acc_max, void *safe);

/* Queue the check of n i32 indices (each in [0, limit)) and return, in
 * L's scratch, the safe copy the guarded kernel must use; with extra > 0,
 * *more points to extra bytes of the same scratch after it (16-byte
 * aligned) for the kernel's own use, else it is NULL. */
vt_status vt_rocm_check_indices(const rocm_call *L, uint32_t name, const void *ptr, int64_t n, int64_t limit,
                                uint64_t extra, void **safe, void **more, hipError_t *e, char *why, size_t why_size);

/* Prologue of every kernel: the call L_ and its stream s, or return. */
#define STREAM()                                                                                                       \
    rocm_call L_;                                                                                                      \
    vt_status st_ = vt_rocm_call_begin(c, dev, a, &L_, why, why_size);                                                 \
    if (st_ != VT_OK)                                                                                                  \
        return st_;                                                                                                    \
    hipStream_t s = L_.s

/* The kernel rows of each op family of the catalogue (convert,
 * elementwise, rows, conv, matmul, attention, select, gather:
 * rocm_kernels_<family>.c), joined by rocm_kernels.c. */
#define VT_ROCM_FAMILY_TABLE(family)                                                                                   \
    extern const vt_kernel vt_rocm_kernels_##family[];                                                                 \
    extern const uint32_t vt_rocm_n_kernels_##family
VT_ROCM_FAMILY_TABLE(convert);
VT_ROCM_FAMILY_TABLE(elementwise);
VT_ROCM_FAMILY_TABLE(rows);
VT_ROCM_FAMILY_TABLE(conv);
VT_ROCM_FAMILY_TABLE(matmul);
VT_ROCM_FAMILY_TABLE(attention);
VT_ROCM_FAMILY_TABLE(select);
VT_ROCM_FAMILY_TABLE(gather);

#endif
