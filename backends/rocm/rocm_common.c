/* rocm_common.c - helpers shared by the rocm backend's op files. */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_common.h"

int vt_rocm_chain_mode = 0;
int vt_rocm_attn_cluster = 1;
long long vt_rocm_gemm_deq_bytes = 256ll << 20;
long long vt_rocm_gemm_deq_min_n = 0;

void vt_rocm_chain_init(int n)
{
    vt_rocm_chain_mode = 0;
#if defined(VT_HIP_PLATFORM_NVIDIA)
    for (int d = 0; d < n; d++) {
        int major = 0;
        if (hipDeviceGetAttribute(&major, hipDeviceAttributeComputeCapabilityMajor, d) != hipSuccess || major < 9) {
            (void)hipGetLastError();
            return;
        }
    }
    const char *e = getenv("VT_ROCM_CHAIN");
    vt_rocm_chain_mode = e && strcmp(e, "0") == 0 ? 0 : 1;
#else
    (void)n;
#endif
}

void vt_rocm_attn_cluster_init(void)
{
    const char *e = getenv("VT_ROCM_ATTN_CLUSTER");
    vt_rocm_attn_cluster = e && strcmp(e, "0") == 0 ? 0 : 1;
}

/* The integer in environment variable name where it is one in [lo, hi],
 * else dflt (unset, empty, trailing characters or out of range). */
static long long env_in_range(const char *name, long long lo, long long hi, long long dflt)
{
    const char *e = getenv(name);
    char *end = NULL;
    const long long v = e ? strtoll(e, &end, 10) : 0;
    return e && end != e && *end == '\0' && v >= lo && v <= hi ? v : dflt;
}

void vt_rocm_gemm_deq_init(void)
{
    vt_rocm_gemm_deq_bytes = env_in_range("VT_ROCM_GEMM_DEQ_MB", 0, 1ll << 20, 256) << 20;
    vt_rocm_gemm_deq_min_n = env_in_range("VT_ROCM_GEMM_DEQ_MIN_N", 1, 65536, 0);
}

int64_t vt_rocm_elems(const vt_operand *o)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < o->ndim; i++)
        n *= o->shape[i];
    return n;
}

vt_status vt_rocm_call_begin(vt_backend_ctx *c, int dev, const vt_op_args *a, rocm_call *L, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    L->c = c;
    L->dev = dev;
    L->a = a;
    bool has_queue = a->struct_size >= offsetof(vt_op_args, queue) + sizeof a->queue && a->queue;
    L->q = has_queue ? a->queue : c->dev[dev].dq;
    L->direct = !has_queue;
    if (!L->q)
        return vt_why(VT_E_DEVICE, why, why_size, "rocm:%d has no stream (%s)", dev, c->dev[dev].readback_reason);
    L->s = L->q->stream;
    return VT_OK;
}

void vt_rocm_checked(const rocm_call *L)
{
    L->q->maybe_err = true;
    if (L->q->capturing)
        L->q->captured_check = true;
}

vt_status vt_rocm_call_scratch(const rocm_call *L, uint64_t bytes, void **ptr, char *why, size_t why_size)
{
    return vt_rocm_scratch(L->c, L->dev, L->q, bytes, ptr, why, why_size);
}

vt_status vt_rocm_done(const rocm_call *L, hipError_t e, const char *what, char *why, size_t why_size)
{
    if (e != hipSuccess) {
        (void)hipGetLastError();
        return vt_rocm_fail(e, what, L->dev, why, why_size);
    }
    if (!L->direct)
        return VT_OK;
    uint32_t failed = 0;
    return vt_rocm_queue_wait(L->c, L->dev, L->q, &failed, why, why_size);
}

hipError_t vt_rocm_check_slots(const rocm_call *L, const void *slots, int64_t n, int64_t limit, bool unique,
                               const void *accepted, int64_t acc_max, void *safe)
{
    hipError_t e = vt_rocm_launch_check_slots(L->q->err, L->a->op, VT_ROCM_NAME_SLOTS, slots, n, limit, unique,
                                              accepted, acc_max, safe, L->s);
    vt_rocm_checked(L);
    return e;
}

vt_status vt_rocm_check_indices(const rocm_call *L, uint32_t name, const void *ptr, int64_t n, int64_t limit,
                                uint64_t extra, void **safe, void **more, hipError_t *e, char *why, size_t why_size)
{
    const uint64_t ids_bytes = ((uint64_t)n * 4 + 15) / 16 * 16;
    vt_status st = vt_rocm_call_scratch(L, ids_bytes + extra, safe, why, why_size);
    if (st != VT_OK)
        return st;
    *more = extra ? (char *)*safe + ids_bytes : NULL;
    *e = vt_rocm_launch_check_range(L->q->err, L->a->op, name, ptr, 0, n, limit, -1, *safe, L->s);
    vt_rocm_checked(L);
    return VT_OK;
}
