/* rocm_error.h - the device error word of a rocm queue: what a kernel
 * found wrong in data that lives in device memory (an index out of range,
 * a bad slot, window or accepted count, a NaN where refused). Shared by the
 * C files and the .hip kernels. The first error of a queue wins (atomic
 * compare-and-swap on code); the host reads it at the next sync point and
 * rebuilds the message from the fields (rocm_queue.c). */
#ifndef VT_ROCM_ERROR_H
#define VT_ROCM_ERROR_H

#include <stdint.h>

/* What went wrong (code); a, b, c, d per code, as the message reads. */
enum {
    VT_ROCM_ERR_NONE = 0,
    VT_ROCM_ERR_RANGE = 1,       /* "<name>[a] = b is outside [0, c)" */
    VT_ROCM_ERR_RANGE_DIM = 2,   /* "<name>[a] = b is outside [0, c) of src dim d" */
    VT_ROCM_ERR_SLOT = 3,        /* "<name>[a] = b is outside [-1, c)" */
    VT_ROCM_ERR_SLOT_TWICE = 4,  /* "<name>[a] and <name>[b] both name slot c" */
    VT_ROCM_ERR_CONV_ACCEPT = 5, /* "accepted[a] = b is outside [1, L-W+2 = c]" */
    VT_ROCM_ERR_GDR_ACCEPT = 6,  /* "accepted[a] = b is outside [1, T=c]" */
    VT_ROCM_ERR_GDR_SLOT = 7,    /* "slots value b at a is outside [-1, c)" */
    VT_ROCM_ERR_GDR_SHARED = 8,  /* "state slot a belongs to rows b and c" */
    /* 9 unused: DsaIndexerLogits accepts any window, as the cpu does */
    VT_ROCM_ERR_NAN = 10,       /* "<name> row a has NaN at index b" */
    VT_ROCM_ERR_INF = 11,       /* "<name> row a has +inf at index b" */
    VT_ROCM_ERR_NO_FINITE = 12, /* "<name> row a has no finite value to sample from" */
    /* Softmax's +inf refusal, in its scan's kind order (a row, b index, c mask index): */
    VT_ROCM_ERR_SOFTMAX_X_INF = 13,     /* "x row a has +inf at index b" */
    VT_ROCM_ERR_SOFTMAX_MASK_INF = 14,  /* "mask has +inf at index c (x row a, index b)" */
    VT_ROCM_ERR_SOFTMAX_LOGIT_INF = 15, /* "x row a index b: x*scale + mask is +inf" */
    VT_ROCM_ERR_SOFTMAX_NAN = 16        /* "x row a index b: x*scale + mask is NaN from infinite operands" */
};

/* Operand names (operand). */
enum {
    VT_ROCM_NAME_IDX = 0,
    VT_ROCM_NAME_IDS = 1,
    VT_ROCM_NAME_SLOTS = 2,
    VT_ROCM_NAME_X = 3,
    VT_ROCM_NAME_LOGITS = 4,
    VT_ROCM_NAME_BIAS = 5
};

/* The word itself (device memory, one per queue). Idle state: code 0,
 * blocks_done 0, scan all ones. */
typedef struct vt_rocm_err {
    uint32_t code;        /* VT_ROCM_ERR_*, 0 when none */
    uint32_t op;          /* vt_op of the call that recorded it */
    uint32_t operand;     /* VT_ROCM_NAME_* */
    uint32_t blocks_done; /* refusal scan: blocks finished (the last one reports) */
    int64_t a, b, c, d;
    unsigned long long scan; /* refusal scan: first offence so far, all ones when none */
} vt_rocm_err;

#endif
