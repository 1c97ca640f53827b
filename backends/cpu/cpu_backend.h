/* cpu_backend.h - the cpu backend's private declarations.
 *
 * The cpu backend is a real backend (device cpu:0, host memory) and the
 * oracle every other backend is checked against; its kernels also form the
 * portable CPU tier the core runs on a host-addressable device's memory. */
#ifndef VT_CPU_BACKEND_H
#define VT_CPU_BACKEND_H

#include <stdatomic.h>

#include <vt/vt_backend.h>

#include "cpu_threads.h"

/* Bytes every cpu allocation is aligned to (one cache line, one AVX-512 vector). */
#define VT_CPU_ALIGNMENT 64

struct vt_cpu_isa;

struct vt_backend_ctx {
    atomic_uint_fast64_t allocs, frees, live_bytes, peak_bytes;
    atomic_uint_fast64_t h2d_copies, d2h_copies, h2d_bytes, d2h_bytes;
    vt_cpu_pool *pool;            /* kernels' threads (cpu_threads.h) */
    const struct vt_cpu_isa *isa; /* SIMD path of the quant and MatMul kernels (cpu_dot.h, VT_CPU_SIMD) */
};

/* Fill caps for the host CPU from /proc and the CPU's feature bits, and
 * the size of ctx's thread pool (host_threads). */
vt_status vt_cpu_probe(const vt_backend_ctx *ctx, vt_device_caps *caps, char *why, size_t why_size);

/* The kernel table, assembled once from the family tables (cpu_kernels.c). */
const vt_kernel *vt_cpu_kernel_table(uint32_t *n);

#endif
