/* cuda_stub.h - the cuda-stub backend: a TEST DOUBLE, not a GPU driver.
 *
 * cuda-stub is the one designed double in vt. It plays a discrete CUDA
 * device (device type 1) on a machine without a GPU, so CI can exercise
 * every discrete-device rule of the core: named refusals of missing ops,
 * the device-fit refusal before allocation, staging through copies.
 *
 *   - It has no native kernels: its kernel table is empty, so every op is
 *     either served by the portable CPU tier (host-addressable mode only)
 *     or refused by name.
 *   - Its device pointers are opaque handles in the kernel half of the
 *     address space: the CPU cannot dereference them (a stray CPU access
 *     faults at once), and data is reached only through the stub's own
 *     write/read copies into host buffers it keeps.
 *   - It counts every allocation and copy (vt_device_stats_get), which is
 *     how tests prove that a refused plan allocated nothing.
 *   - Contract version 2 (cuda_stub_queue.c): queues, events and async
 *     copies as a discrete device has them. Work put on a queue is only
 *     RECORDED when the call returns; the "device" runs it when the host
 *     waits (queue or event sync, synchronize, a blocking copy, a query of
 *     nothing), so a host that reads results without a sync point sees
 *     stale memory and an event that is not ready - as on a real GPU. Host
 *     waits count in syncs, enqueues in launches. Data-dependent errors of
 *     its kernels land in the queue's error word (first wins). Graphs are
 *     the core's recorded list, replayed through enqueue and the copies.
 *   - With VT_CUDA_STUB_KERNELS=1 (read when the plugin is loaded) it has a
 *     few native f32 kernels (cuda_stub_kernels.c: Scale, Add, GetRows,
 *     Argmax) and an accepts predicate (Argmax rows of at most 2^20), so the
 *     queue contract can be tested end to end; without it the kernel table
 *     is empty, as before.
 *
 * Environment, read at init:
 *   VT_CUDA_STUB_MEMORY_BYTES      device memory size (default 16 GiB)
 *   VT_CUDA_STUB_HOST_ADDRESSABLE  1: pointers are real host memory, the
 *                                  device is host-addressable (the CPU tier
 *                                  may run on it); default 0
 *   VT_CUDA_STUB_DEVICES           number of devices (default 1; 0 gives a
 *                                  loaded backend with zero devices)
 *   VT_CUDA_STUB_NO_CODE_OBJECT    1 (read at each probe): the probe reports
 *                                  kernels_unavailable as the rocm backend
 *                                  does for a GPU arch it was not built for
 *
 * Fault injection (counts are per device, 1-based, over the context's life):
 *   VT_CUDA_STUB_FAIL_ALLOC_AT=N   the N-th allocation fails (VT_E_DEVICE_OOM), once
 *   VT_CUDA_STUB_FAIL_COPY_AT=N    the N-th copy (write or read) fails (VT_E_DEVICE), once
 *   VT_CUDA_STUB_FAIL_PROBE_AT=N   the N-th probe fails (VT_E_DEVICE), once (#1 is the registry's at open)
 *   VT_CUDA_STUB_LOSE_AT_COPY=N    the device is lost at the N-th copy: that call
 *                                  and every later one but release return
 *                                  VT_E_DEVICE_LOST
 *   VT_CUDA_STUB_FAULT_DEVICE=K    inject only on device K (default: every device)
 */
#ifndef VT_CUDA_STUB_H
#define VT_CUDA_STUB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <vt/vt_backend.h>

#define VT_CUDA_STUB_DEFAULT_MEMORY (16ull << 30)
#define VT_CUDA_STUB_ALIGNMENT      256u
#define VT_CUDA_STUB_MAX_DEVICES    8

/* One live allocation: where the handle points and where the bytes are. */
typedef struct stub_block {
    uint64_t offset;     /* from the device's handle base */
    uint64_t size;       /* padded to VT_CUDA_STUB_ALIGNMENT */
    unsigned char *host; /* backing store in host memory */
} stub_block;

/* One unit of recorded queue work (cuda_stub_queue.c). */
typedef struct stub_cmd stub_cmd;

/* One stub device. */
typedef struct stub_device {
    pthread_mutex_t lock;
    vt_backend_queue **queues; /* live queues (drained by blocking calls) */
    size_t n_queues, cap_queues;
    vt_backend_event **events; /* live events (forget a destroyed queue) */
    size_t n_events, cap_events;
    uintptr_t base;     /* first handle address (opaque mode), see handle_base */
    stub_block *blocks; /* sorted by offset */
    size_t n_blocks, cap_blocks;
    vt_backend_counters counters;
    uint64_t alloc_calls, copy_calls, probe_calls; /* for fault injection */
    bool lost;                                     /* device lost (injected) */
} stub_device;

/* Injected faults, from the environment at init (0 = none). */
typedef struct stub_faults {
    uint64_t fail_alloc_at, fail_copy_at, lose_at_copy, fail_probe_at;
    int device; /* -1: every device */
} stub_faults;

struct vt_backend_ctx {
    uint64_t memory_bytes;
    bool host_addressable;
    int n_devices;
    stub_faults faults;
    stub_device dev[VT_CUDA_STUB_MAX_DEVICES];
};

/* Resolve [p, p+bytes) to its host backing; caller holds the device lock. */
vt_status stub_resolve_range(vt_backend_ctx *c, int dev, const void *p, uint64_t bytes, unsigned char **host, char *why,
                             size_t why_size);

/* Count a copy and apply the copy faults; caller holds the lock. */
vt_status stub_copy_fault(vt_backend_ctx *c, stub_device *sd, int dev, char *why, size_t why_size);

/* Run every queue of dev to its end (caller holds the lock). */
void stub_drain_all(vt_backend_ctx *c, int dev);

/* The version-2 members (cuda_stub_queue.c). */
vt_status stub_queue_create(vt_backend_ctx *c, int dev, vt_backend_queue **q, char *why, size_t why_size);
void stub_queue_destroy(vt_backend_ctx *c, int dev, vt_backend_queue *q);
vt_status stub_enqueue(vt_backend_ctx *c, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                       size_t why_size);
vt_status stub_queue_sync(vt_backend_ctx *c, int dev, vt_backend_queue *q, uint32_t *failed_op, char *why,
                          size_t why_size);
vt_status stub_write_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                           const void *src, uint64_t bytes, char *why, size_t why_size);
vt_status stub_read_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, const void *src,
                          uint64_t src_offset, uint64_t bytes, char *why, size_t why_size);
vt_status stub_copy_async(vt_backend_ctx *c, int dev, vt_backend_queue *q, void *dst, uint64_t dst_offset,
                          const void *src, uint64_t src_offset, uint64_t bytes, char *why, size_t why_size);
vt_status stub_event_create(vt_backend_ctx *c, int dev, vt_backend_event **e, char *why, size_t why_size);
void stub_event_destroy(vt_backend_ctx *c, int dev, vt_backend_event *e);
vt_status stub_event_record(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_event *e, char *why,
                            size_t why_size);
vt_status stub_queue_wait_event(vt_backend_ctx *c, int dev, vt_backend_queue *q, vt_backend_event *e, char *why,
                                size_t why_size);
vt_status stub_event_query(vt_backend_ctx *c, int dev, vt_backend_event *e);
vt_status stub_event_sync(vt_backend_ctx *c, int dev, vt_backend_event *e, uint32_t *failed_op, char *why,
                          size_t why_size);
vt_status stub_event_elapsed_ms(vt_backend_ctx *c, int dev, vt_backend_event *start, vt_backend_event *end, float *ms,
                                char *why, size_t why_size);

/* The native kernels of VT_CUDA_STUB_KERNELS=1 (cuda_stub_kernels.c); they
 * run on host-resolved operands when the device executes the queue. */
#define VT_CUDA_STUB_N_KERNELS 4
extern const vt_kernel vt_cuda_stub_kernels[VT_CUDA_STUB_N_KERNELS];
vt_status stub_accepts(vt_backend_ctx *c, int dev, const vt_kernel *k, const vt_op_args *args, char *why,
                       size_t why_size);

#endif
