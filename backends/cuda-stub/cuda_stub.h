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

/* One stub device. */
typedef struct stub_device {
    pthread_mutex_t lock;
    uintptr_t base;     /* first handle address (opaque mode), see handle_base */
    stub_block *blocks; /* sorted by offset */
    size_t n_blocks, cap_blocks;
    vt_backend_counters counters;
    uint64_t alloc_calls, copy_calls; /* for fault injection */
    bool lost;                        /* device lost (injected) */
} stub_device;

/* Injected faults, from the environment at init (0 = none). */
typedef struct stub_faults {
    uint64_t fail_alloc_at, fail_copy_at, lose_at_copy;
    int device; /* -1: every device */
} stub_faults;

struct vt_backend_ctx {
    uint64_t memory_bytes;
    bool host_addressable;
    int n_devices;
    stub_faults faults;
    stub_device dev[VT_CUDA_STUB_MAX_DEVICES];
};

#endif
