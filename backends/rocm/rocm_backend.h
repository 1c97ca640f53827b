/* rocm_backend.h - the rocm backend's private state and helpers. */
#ifndef VT_ROCM_BACKEND_H
#define VT_ROCM_BACKEND_H

#include <pthread.h>
#include <stdbool.h>

#include <vt/vt_backend.h>

#include "rocm_error.h"
#include "vt_hip.h"

/* hipMalloc's documented alignment. */
#define VT_ROCM_ALIGNMENT 256u

/* One live allocation, for the counters. */
typedef struct rocm_allocation {
    void *ptr;
    uint64_t bytes;
} rocm_allocation;

/* A queue: one HIP stream, its device error word and the scratch its
 * kernels use (one at a time, in the stream's order). */
struct vt_backend_queue {
    int dev;
    hipStream_t stream;
    vt_rocm_err *err;    /* device error word (rocm_error.h) */
    vt_rocm_err *mirror; /* pinned host copy, filled just before a sync */
    bool maybe_err;      /* a check ran since the last sync: read the word */
    bool capturing;      /* between graph_begin and graph_end */
    bool captured_check; /* a check was captured in the graph being recorded */
    void *scratch;       /* safe copies of indices, sort buffers */
    uint32_t *counters;  /* VT_ROCM_QUEUE_COUNTERS arrival counters, zero between kernels (after err) */
    uint64_t scratch_bytes;
    vt_rocm_err reported; /* last error an event_sync already returned (device lock) */
    bool have_reported;
};

/* Arrival counters of a queue (in its error word's allocation, after the
 * word): zeroed when the queue is made; a kernel that counts its blocks'
 * arrivals in them (Attention decode, whose last block merges) resets
 * them before it ends, so a step needs no memset of its own. */
#define VT_ROCM_QUEUE_COUNTERS     4096
#define VT_ROCM_QUEUE_COUNTERS_OFF 256 /* bytes from the word to the counters */

/* q's counters when n of them are enough, else NULL (the kernel then
 * zeroes counters of its own on the stream). */
static inline uint32_t *vt_rocm_queue_counters(const vt_backend_queue *q, int64_t n)
{
    return q->counters && n > 0 && n <= VT_ROCM_QUEUE_COUNTERS ? q->counters : NULL;
}

/* An event: a HIP event and what its queue's error word said when it was
 * recorded (copied on the stream just before it). */
struct vt_backend_event {
    hipEvent_t ev;
    vt_backend_queue *q; /* queue of the last record, NULL before; may be destroyed since (see live) */
    vt_rocm_err *mirror; /* pinned */
    bool mirrored;       /* a copy of the word was queued before the record */
};

/* A captured graph, replayable on any queue of its device. */
struct vt_backend_graph {
    hipGraph_t graph;
    hipGraphExec_t exec;
    vt_rocm_err *origin_err; /* error word of the queue it was captured on (kept until fini) */
    bool has_check;
};

/* Per-device state. */
typedef struct rocm_device {
    pthread_mutex_t lock; /* guards allocs, counters, retired, queues, reported and the readback probe */
    vt_backend_queue *dq; /* internal queue: blocking copies, direct kernel calls, probes */
    bool stream_ok;
    rocm_allocation *allocs;
    size_t n_allocs, cap_allocs;
    vt_backend_counters counters;
    vt_backend_queue **queues; /* live queues (an event's queue may be destroyed before it) */
    size_t n_queues, cap_queues;
    void **retired; /* scratch and error words that graphs may still name; freed at fini */
    size_t n_retired, cap_retired;
    bool readback_ok; /* the self-test of init */
    char readback_reason[VT_CAPS_TEXT];
} rocm_device;

struct vt_backend_ctx {
    int n_devices;
    char no_device_reason[256]; /* what hipGetDeviceCount said when 0 */
    bool managed_requested;     /* VT_ROCM_MANAGED_ALLOC=1 */
    rocm_device *dev;
};

/* HIP runtime helpers (rocm_runtime.c). "hipErrorNoDevice (no
 * ROCm-capable device is detected)": the error's name, and its text when
 * the runtime gives more than the name. */
void vt_rocm_error_text(hipError_t e, char *buf, size_t size);

/* "hipMalloc: hipErrorOutOfMemory (out of memory)"-style status from a HIP
 * error; OOM maps to VT_E_DEVICE_OOM, the rest to VT_E_DEVICE. */
vt_status vt_rocm_fail(hipError_t e, const char *what, int dev, char *why, size_t why_size);

/* Make dev current on this thread. */
vt_status vt_rocm_use(vt_backend_ctx *ctx, int dev, char *why, size_t why_size);

/* True when managed allocation is both requested and supported on dev. */
bool vt_rocm_managed_active(vt_backend_ctx *ctx, int dev);

/* The sampled-token readback self-test of dev, run once at init under the
 * device lock (rocm_probe.c). */
void vt_rocm_readback_self_test(vt_backend_ctx *ctx, int dev);

/* Probe dev into caps (rocm_probe.c). */
vt_status vt_rocm_probe(vt_backend_ctx *ctx, int dev, vt_device_caps *caps, char *why, size_t why_size);

/* Queues (rocm_queue.c). */
vt_status vt_rocm_queue_new(vt_backend_ctx *ctx, int dev, vt_backend_queue **q, char *why, size_t why_size);
void vt_rocm_queue_free(vt_backend_ctx *ctx, int dev, vt_backend_queue *q);

/* Wait for q, then return its first device-recorded error since the last
 * sync (and clear it): status, *failed_op, why. Counts a sync. */
vt_status vt_rocm_queue_wait(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, uint32_t *failed_op, char *why,
                             size_t why_size);

/* The message of an error word ("idx[1] = 7 is outside [0, 3)"). */
void vt_rocm_err_text(const vt_rocm_err *e, char *why, size_t why_size);

/* Is q a live queue of dev? Caller holds the device lock. */
bool vt_rocm_queue_live(vt_backend_ctx *ctx, int dev, const vt_backend_queue *q);

/* Same error (code, op, operand and fields)? */
bool vt_rocm_err_same(const vt_rocm_err *x, const vt_rocm_err *y);

/* Scratch of q of at least bytes; a smaller old one is kept until fini
 * (queued work and graphs may still name it). */
vt_status vt_rocm_scratch(vt_backend_ctx *ctx, int dev, vt_backend_queue *q, uint64_t bytes, void **ptr, char *why,
                          size_t why_size);

/* Keep device memory p until fini (graphs may name it). */
void vt_rocm_retire(vt_backend_ctx *ctx, int dev, void *p);

/* Count a host wait / a launch on dev. */
void vt_rocm_count_sync(vt_backend_ctx *ctx, int dev);
void vt_rocm_count_launch(vt_backend_ctx *ctx, int dev);

/* The iface's version-2 members (rocm_stream.c). */
void vt_rocm_fill_iface_v2(vt_backend_iface *iface);

/* The kernel table, assembled once from the family tables (rocm_kernels.c). */
const vt_kernel *vt_rocm_kernel_table(uint32_t *n);

/* How the decode path's kernels are queued (rocm_chain.h): 0 plainly, 1
 * chained. Set once by vt_rocm_chain_init; read by the launchers. */
extern int vt_rocm_chain_mode;

/* Choose vt_rocm_chain_mode for n devices: chained on NVIDIA when every
 * device is sm_90 or later, unless VT_ROCM_CHAIN=0. */
void vt_rocm_chain_init(int n);

/* Whether the decode Attention of NVIDIA sm_90 may merge its chunks within
 * a thread block cluster (kernels_attention_decode_mma.hip): 1, or 0 when
 * VT_ROCM_ATTN_CLUSTER=0. Set once by vt_rocm_attn_cluster_init. */
extern int vt_rocm_attn_cluster;

/* Read VT_ROCM_ATTN_CLUSTER into vt_rocm_attn_cluster. */
void vt_rocm_attn_cluster_init(void);

/* The most scratch, in bytes, that the prefill GEMM of the block formats
 * it dequantizes (kernels_gemm.hip) gives W as bf16 pairs: 256 MiB, or
 * VT_ROCM_GEMM_DEQ_MB MiB (0: never); a larger W keeps the decode kernels.
 * Set once by vt_rocm_gemm_deq_init. */
extern long long vt_rocm_gemm_deq_bytes;

/* The first width (rows of x) at which that path is taken, for every
 * format it takes, from VT_ROCM_GEMM_DEQ_MIN_N (1 .. 65536), or 0 (the
 * default): each format's own (kernels_gemm.hip, deq_min_n). Set once by
 * vt_rocm_gemm_deq_init. */
extern long long vt_rocm_gemm_deq_min_n;

/* Read VT_ROCM_GEMM_DEQ_MB into vt_rocm_gemm_deq_bytes and
 * VT_ROCM_GEMM_DEQ_MIN_N into vt_rocm_gemm_deq_min_n. */
void vt_rocm_gemm_deq_init(void);

#endif
