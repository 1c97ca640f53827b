/* caps.c - names for device types and op classes, the staging decisions
 * derived from needs_weight_staging, and keep-quant sets derived from a
 * backend's kernel table. */
#include "config.h"

#include "vt_internal.h"

const char *vt_device_type_name(vt_device_type type)
{
    switch (type) {
    case VT_DEVICE_CPU: return "CPU";
    case VT_DEVICE_CUDA: return "CUDA";
    case VT_DEVICE_METAL: return "METAL";
    case VT_DEVICE_VULKAN: return "VULKAN";
    case VT_DEVICE_TENSTORRENT: return "TENSTORRENT";
    case VT_DEVICE_ROCM: return "ROCM";
    }
    return "UNKNOWN";
}

const char *vt_op_class_name(int op_class)
{
    switch (op_class) {
    case VT_OP_CLASS_MATMUL: return "matmul";
    case VT_OP_CLASS_GATHER: return "gather";
    case VT_OP_CLASS_MOE_EXPERT: return "moe-expert";
    case VT_OP_CLASS_NONE: return "none";
    }
    return "unknown";
}

vt_staging_decisions vt_caps_staging_decisions(const vt_device_caps *caps)
{
    /* The one capability every staging-dependent decision asks. */
    bool staging = caps->needs_weight_staging;
    vt_staging_decisions d;
    d.direct_to_device_load = staging;
    d.device_state_cache_io = staging;
    d.merged_projection = staging;
    d.packed_decode = staging;
    d.resident_weight_prepare = staging;
    /* In place needs device access to pageable host memory: a managed
     * allocation (opted in) is host-addressable but the file's mapping is
     * not device memory, so every weight is copied there. */
    d.weights_in_place = !staging && !caps->managed_memory_enabled;
    d.device_fit_all_weights = !d.weights_in_place;
    return d;
}

/* Which op consumes a weight of each op class, and which signature slot
 * holds the weight's dtype. */
static const struct {
    int op_class;
    uint32_t op;
    uint32_t slot;
} class_ops[] = {
    {VT_OP_CLASS_MATMUL, VT_OP_MATMUL, 1},                /* (x, W) */
    {VT_OP_CLASS_GATHER, VT_OP_GET_ROWS, 0},              /* (table, idx, dst) */
    {VT_OP_CLASS_MOE_EXPERT, VT_OP_MOE_EXPERT_MATMUL, 1}, /* (x, W, ids) */
};

void vt_caps_derive_keep_quant(vt_device_caps *caps, const vt_kernel *table, uint32_t n)
{
    for (int c = 0; c < VT_OP_CLASS_COUNT; c++)
        caps->keep_quant[c] = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (size_t j = 0; j < sizeof class_ops / sizeof class_ops[0]; j++) {
            if (table[i].op != class_ops[j].op || table[i].sig.n <= class_ops[j].slot)
                continue;
            uint32_t dt = table[i].sig.dtype[class_ops[j].slot];
            const vt_dtype_info *info = vt_dtype_get(dt);
            if (info && info->quantized && dt < 64)
                caps->keep_quant[class_ops[j].op_class] |= (uint64_t)1 << dt;
        }
    }
}
