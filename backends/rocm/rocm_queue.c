/* rocm_queue.c - the rocm backend's queues: a HIP stream each, with its
 * device error word (read and cleared at sync points only, never before a
 * launch), the message built from that word, the scratch the check and
 * sort kernels use, and the launch and sync counters. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "rocm_backend.h"
#include "rocm_launch.h"

_Static_assert(sizeof(vt_rocm_err) <= VT_ROCM_QUEUE_COUNTERS_OFF, "the counters follow the error word");

/* The idle state of an error word. */
static const vt_rocm_err idle_word = {0, 0, 0, 0, 0, 0, 0, 0, ~0ull};

void vt_rocm_count_sync(vt_backend_ctx *c, int dev)
{
    __atomic_fetch_add(&c->dev[dev].counters.syncs, 1, __ATOMIC_RELAXED);
}

void vt_rocm_count_launch(vt_backend_ctx *c, int dev)
{
    __atomic_fetch_add(&c->dev[dev].counters.launches, 1, __ATOMIC_RELAXED);
}

void vt_rocm_retire(vt_backend_ctx *c, int dev, void *p)
{
    if (!p)
        return;
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    if (rd->n_retired == rd->cap_retired) {
        size_t cap = rd->cap_retired ? rd->cap_retired * 2 : 16;
        void **nr = realloc(rd->retired, cap * sizeof *nr);
        if (!nr) { /* cannot keep it: free it now (the device waits) */
            pthread_mutex_unlock(&rd->lock);
            (void)hipFree(p);
            return;
        }
        rd->retired = nr;
        rd->cap_retired = cap;
    }
    rd->retired[rd->n_retired++] = p;
    pthread_mutex_unlock(&rd->lock);
}

vt_status vt_rocm_queue_new(vt_backend_ctx *c, int dev, vt_backend_queue **out, char *why, size_t why_size)
{
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    vt_backend_queue *q = calloc(1, sizeof *q);
    if (!q)
        return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
    q->dev = dev;
    const char *step = "hipStreamCreateWithFlags";
    bool have_stream = false;
    hipError_t e = hipStreamCreateWithFlags(&q->stream, hipStreamNonBlocking);
    if (e == hipSuccess) {
        have_stream = true;
        step = "hipMalloc(error word and counters)";
        e = hipMalloc((void **)&q->err, VT_ROCM_QUEUE_COUNTERS_OFF + VT_ROCM_QUEUE_COUNTERS * sizeof(uint32_t));
    }
    if (e == hipSuccess) {
        step = "hipHostMalloc(error word mirror)";
        e = hipHostMalloc((void **)&q->mirror, sizeof *q->mirror, hipHostMallocDefault);
    }
    if (e == hipSuccess) {
        step = "hipMemcpyAsync(error word)";
        e = hipMemcpyAsync(q->err, &idle_word, sizeof idle_word, hipMemcpyHostToDevice, q->stream);
    }
    if (e == hipSuccess) {
        step = "hipMemsetAsync(counters)";
        q->counters = (uint32_t *)(void *)((char *)q->err + VT_ROCM_QUEUE_COUNTERS_OFF);
        e = hipMemsetAsync(q->counters, 0, VT_ROCM_QUEUE_COUNTERS * sizeof(uint32_t), q->stream);
    }
    if (e == hipSuccess) {
        step = "hipStreamSynchronize";
        e = hipStreamSynchronize(q->stream);
    }
    if (e != hipSuccess) {
        (void)hipGetLastError();
        st = vt_rocm_fail(e, step, dev, why, why_size);
        if (q->mirror)
            (void)hipHostFree(q->mirror);
        if (q->err)
            (void)hipFree(q->err);
        if (have_stream)
            (void)hipStreamDestroy(q->stream);
        free(q);
        return st;
    }
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    if (rd->n_queues == rd->cap_queues) {
        size_t cap = rd->cap_queues ? rd->cap_queues * 2 : 8;
        vt_backend_queue **nq = realloc(rd->queues, cap * sizeof *nq);
        if (!nq) {
            pthread_mutex_unlock(&rd->lock);
            (void)hipHostFree(q->mirror);
            (void)hipFree(q->err);
            (void)hipStreamDestroy(q->stream);
            free(q);
            return vt_why(VT_E_NO_MEMORY, why, why_size, "out of host memory");
        }
        rd->queues = nq;
        rd->cap_queues = cap;
    }
    rd->queues[rd->n_queues++] = q;
    pthread_mutex_unlock(&rd->lock);
    *out = q;
    return VT_OK;
}

void vt_rocm_queue_free(vt_backend_ctx *c, int dev, vt_backend_queue *q)
{
    if (!q)
        return;
    rocm_device *rd = &c->dev[dev];
    pthread_mutex_lock(&rd->lock);
    for (size_t i = 0; i < rd->n_queues; i++)
        if (rd->queues[i] == q) {
            rd->queues[i] = rd->queues[--rd->n_queues];
            break;
        }
    pthread_mutex_unlock(&rd->lock);
    if (hipSetDevice(dev) == hipSuccess) {
        (void)hipStreamSynchronize(q->stream);
        (void)hipStreamDestroy(q->stream);
        (void)hipHostFree(q->mirror);
    }
    /* Graphs captured on q keep naming its word and scratch. */
    vt_rocm_retire(c, dev, q->err);
    vt_rocm_retire(c, dev, q->scratch);
    free(q);
}

vt_status vt_rocm_scratch(vt_backend_ctx *c, int dev, vt_backend_queue *q, uint64_t bytes, void **ptr, char *why,
                          size_t why_size)
{
    if (bytes > q->scratch_bytes) {
        uint64_t want = bytes < 2 * q->scratch_bytes ? 2 * q->scratch_bytes : bytes;
        if (want < 4096)
            want = 4096;
        void *p = NULL;
        hipError_t e = hipMalloc(&p, (size_t)want);
        if (e != hipSuccess) {
            (void)hipGetLastError();
            return vt_rocm_fail(e, "hipMalloc(queue scratch)", dev, why, why_size);
        }
        vt_rocm_retire(c, dev, q->scratch);
        q->scratch = p;
        q->scratch_bytes = want;
    }
    *ptr = q->scratch;
    return VT_OK;
}

static const char *operand_name(uint32_t n)
{
    switch (n) {
    case VT_ROCM_NAME_IDX: return "idx";
    case VT_ROCM_NAME_IDS: return "ids";
    case VT_ROCM_NAME_SLOTS: return "slots";
    case VT_ROCM_NAME_X: return "x";
    case VT_ROCM_NAME_LOGITS: return "logits";
    case VT_ROCM_NAME_BIAS: return "bias";
    }
    return "operand";
}

void vt_rocm_err_text(const vt_rocm_err *e, char *why, size_t why_size)
{
    const char *n = operand_name(e->operand);
    long long a = (long long)e->a, b = (long long)e->b, c = (long long)e->c, d = (long long)e->d;
    switch (e->code) {
    case VT_ROCM_ERR_RANGE: vt_why(VT_OK, why, why_size, "%s[%lld] = %lld is outside [0, %lld)", n, a, b, c); break;
    case VT_ROCM_ERR_RANGE_DIM:
        vt_why(VT_OK, why, why_size, "%s[%lld] = %lld is outside [0, %lld) of src dim %lld", n, a, b, c, d);
        break;
    case VT_ROCM_ERR_SLOT: vt_why(VT_OK, why, why_size, "%s[%lld] = %lld is outside [-1, %lld)", n, a, b, c); break;
    case VT_ROCM_ERR_SLOT_TWICE:
        vt_why(VT_OK, why, why_size, "%s[%lld] and %s[%lld] both name slot %lld", n, a, n, b, c);
        break;
    case VT_ROCM_ERR_CONV_ACCEPT:
        vt_why(VT_OK, why, why_size, "accepted[%lld] = %lld is outside [1, L-W+2 = %lld]", a, b, c);
        break;
    case VT_ROCM_ERR_GDR_ACCEPT:
        vt_why(VT_OK, why, why_size, "accepted[%lld] = %lld is outside [1, T=%lld]", a, b, c);
        break;
    case VT_ROCM_ERR_GDR_SLOT:
        vt_why(VT_OK, why, why_size, "slots value %lld at %lld is outside [-1, %lld)", b, a, c);
        break;
    case VT_ROCM_ERR_GDR_SHARED:
        vt_why(VT_OK, why, why_size, "state slot %lld belongs to rows %lld and %lld", a, b, c);
        break;
    case VT_ROCM_ERR_NAN: vt_why(VT_OK, why, why_size, "%s row %lld has NaN at index %lld", n, a, b); break;
    case VT_ROCM_ERR_INF: vt_why(VT_OK, why, why_size, "%s row %lld has +inf at index %lld", n, a, b); break;
    case VT_ROCM_ERR_NO_FINITE:
        vt_why(VT_OK, why, why_size, "%s row %lld has no finite value to sample from", n, a);
        break;
    case VT_ROCM_ERR_SOFTMAX_X_INF: vt_why(VT_OK, why, why_size, "x row %lld has +inf at index %lld", a, b); break;
    case VT_ROCM_ERR_SOFTMAX_MASK_INF:
        vt_why(VT_OK, why, why_size, "mask has +inf at index %lld (x row %lld, index %lld)", c, a, b);
        break;
    case VT_ROCM_ERR_SOFTMAX_LOGIT_INF:
        vt_why(VT_OK, why, why_size, "x row %lld index %lld: x*scale + mask is +inf", a, b);
        break;
    case VT_ROCM_ERR_SOFTMAX_NAN:
        vt_why(VT_OK, why, why_size, "x row %lld index %lld: x*scale + mask is NaN from infinite operands", a, b);
        break;
    default: vt_why(VT_OK, why, why_size, "device error code %u", e->code); break;
    }
}

bool vt_rocm_queue_live(vt_backend_ctx *c, int dev, const vt_backend_queue *q)
{
    const rocm_device *rd = &c->dev[dev];
    for (size_t i = 0; i < rd->n_queues; i++)
        if (rd->queues[i] == q)
            return true;
    return false;
}

bool vt_rocm_err_same(const vt_rocm_err *x, const vt_rocm_err *y)
{
    return x->code == y->code && x->op == y->op && x->operand == y->operand && x->a == y->a && x->b == y->b &&
           x->c == y->c && x->d == y->d;
}

vt_status vt_rocm_queue_wait(vt_backend_ctx *c, int dev, vt_backend_queue *q, uint32_t *failed_op, char *why,
                             size_t why_size)
{
    if (failed_op)
        *failed_op = 0;
    vt_status st = vt_rocm_use(c, dev, why, why_size);
    if (st != VT_OK)
        return st;
    bool look = q->maybe_err;
    hipError_t e = hipSuccess;
    if (look)
        e = hipMemcpyAsync(q->mirror, q->err, sizeof *q->mirror, hipMemcpyDeviceToHost, q->stream);
    if (e == hipSuccess)
        e = hipStreamSynchronize(q->stream);
    vt_rocm_count_sync(c, dev);
    if (e != hipSuccess)
        return vt_rocm_fail(e, "hipStreamSynchronize", dev, why, why_size);
    q->maybe_err = false;
    if (!look || q->mirror->code == VT_ROCM_ERR_NONE)
        return VT_OK;
    vt_rocm_err word = *q->mirror;
    /* Clear the word in the stream's order (later work may set it again). */
    e = hipMemsetAsync(&q->err->code, 0, sizeof q->err->code, q->stream);
    if (e != hipSuccess)
        return vt_rocm_fail(e, "hipMemsetAsync(error word)", dev, why, why_size);
    pthread_mutex_lock(&c->dev[dev].lock);
    bool seen = q->have_reported && vt_rocm_err_same(&q->reported, &word);
    q->have_reported = false;
    pthread_mutex_unlock(&c->dev[dev].lock);
    if (seen) /* an event_sync returned it already */
        return VT_OK;
    if (failed_op)
        *failed_op = word.op;
    vt_rocm_err_text(&word, why, why_size);
    return VT_E_INVALID_ARG;
}
