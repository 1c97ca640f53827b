/* vt_dtype.h - element types: one table for every ggml type id.
 *
 * vt uses ggml's type ids as its dtype numbers, so a GGUF tensor's type, a
 * resident weight's format and a kernel signature all speak one language.
 * The table (vt_dtype_info) is where the host reads block sizes (the
 * GGUF parser, the residency code, the kernels); those of SPEC 7's block
 * formats are written once, in vt_blocks.h, which device code reads. */
#ifndef VT_DTYPE_H
#define VT_DTYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ggml type ids. Ids 4, 5 (Q4_2, Q4_3), 31-33 (Q4_0_4_4, Q4_0_4_8,
 * Q4_0_8_8) and 36-38 (IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8) were removed
 * from ggml and are refused wherever they appear. */
typedef enum vt_dtype {
    VT_F32 = 0,
    VT_F16 = 1,
    VT_Q4_0 = 2,
    VT_Q4_1 = 3,
    VT_Q5_0 = 6,
    VT_Q5_1 = 7,
    VT_Q8_0 = 8,
    VT_Q8_1 = 9,
    VT_Q2_K = 10,
    VT_Q3_K = 11,
    VT_Q4_K = 12,
    VT_Q5_K = 13,
    VT_Q6_K = 14,
    VT_Q8_K = 15,
    VT_IQ2_XXS = 16,
    VT_IQ2_XS = 17,
    VT_IQ3_XXS = 18,
    VT_IQ1_S = 19,
    VT_IQ4_NL = 20,
    VT_IQ3_S = 21,
    VT_IQ2_S = 22,
    VT_IQ4_XS = 23,
    VT_I8 = 24,
    VT_I16 = 25,
    VT_I32 = 26,
    VT_I64 = 27,
    VT_F64 = 28,
    VT_IQ1_M = 29,
    VT_BF16 = 30,
    VT_TQ1_0 = 34,
    VT_TQ2_0 = 35,
    VT_MXFP4 = 39,
    VT_DTYPE_COUNT = 40 /* one past the largest id; not a type */
} vt_dtype;

/* One row of the type table. */
typedef struct vt_dtype_info {
    const char *name;     /* ggml's spelling: "f32", "q4_0", "iq4_nl" */
    uint32_t block_elems; /* elements per block (1 for plain types) */
    uint32_t block_bytes; /* bytes per block */
    bool quantized;       /* a GGUF block format (q in SPEC 7) */
    bool is_float;        /* f32, f16, bf16, f64 */
    bool is_int;          /* i8 .. i64 */
} vt_dtype_info;

/* Table row for a type id, or NULL when the id is unknown or removed. */
const vt_dtype_info *vt_dtype_get(vt_dtype id);

/* Name of a type id ("q4_k"); "removed(4)" / "unknown(77)" otherwise. The
 * returned string is static or thread-local; copy it to keep it. */
const char *vt_dtype_name(vt_dtype id);

/* The type id of a name as printed by vt_dtype_name (case-insensitive)
 * into *out; false (and *out untouched) when no type has that name. */
bool vt_dtype_from_name(const char *name, vt_dtype *out);

/* True when the id is one that ggml removed (4, 5, 31-33, 36-38). */
bool vt_dtype_is_removed(vt_dtype id);

/* The alignment in bytes that data of type id needs in memory (a device
 * faults on a misaligned load): the element size of a plain type, 2 for a
 * block format (its f16 scales); 0 when the type is unknown. */
uint32_t vt_dtype_alignment(vt_dtype id);

/* Bytes of a row of n elements of type id: (n / block_elems) * block_bytes.
 * Returns false (and leaves *bytes alone) when the type is unknown, n is not
 * a multiple of the block, or the product overflows. */
bool vt_dtype_row_bytes(vt_dtype id, int64_t n, uint64_t *bytes);

/* Why vt_dtype_shape_size refused a shape. */
typedef enum vt_size_result {
    VT_SIZE_OK = 0,
    VT_SIZE_BAD_TYPE,          /* type not in the type table, or too many dims */
    VT_SIZE_NEGATIVE,          /* a dim is negative */
    VT_SIZE_ELEMENTS_OVERFLOW, /* the element count overflows int64 */
    VT_SIZE_NOT_BLOCKS,        /* the innermost dim is not a multiple of the block */
    VT_SIZE_BYTES_OVERFLOW     /* (inner/blck)*block_bytes*other dims overflows 64 bits */
} vt_size_result;

/* The one tensor-size rule (GGUF parser, tensors, .npy, kernels): element
 * count and bytes of a tensor of type id with ndim dims (row-major shape,
 * innermost last, at most 8). Every overflow check counts a zero dim as 1,
 * so a shape is refused when it would overflow whatever its zero dims: an
 * empty tensor cannot hide a dim whose products wrap. Outputs (NULL
 * allowed) are set only on VT_SIZE_OK. */
vt_size_result vt_dtype_shape_size(vt_dtype id, uint32_t ndim, const int64_t *shape, int64_t *elems, uint64_t *bytes);

/* Bytes of a tensor of type id with ndim dims (row-major shape, innermost
 * last): vt_dtype_shape_size's bytes, false where it refuses the shape. */
bool vt_dtype_tensor_bytes(vt_dtype id, uint32_t ndim, const int64_t *shape, uint64_t *bytes);

/* The conversions below compile as device code too (nvcc, hipcc), so the
 * GPU kernels round exactly as the host does. */
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define VT_HOST_DEVICE __host__ __device__
#else
#define VT_HOST_DEVICE
#endif

/* IEEE half -> float, exact. */
static inline VT_HOST_DEVICE float vt_f16_to_f32(uint16_t h)
{
    /* Normal halves rebias the exponent by 127 - 15 in one add; subnormals
     * are man * 2^-24, a normal float, exact without a loop or a denormal
     * intermediate (so flush-to-zero modes cannot touch it). */
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = h & 0x7c00u;
    uint32_t bits;
    if (exp == 0x7c00u) {
        bits = sign | 0x7f800000u | ((uint32_t)(h & 0x3ffu) << 13);
    } else if (exp != 0) {
        bits = sign | (((uint32_t)(h & 0x7fffu) << 13) + 0x38000000u);
    } else {
        float f = (float)(h & 0x3ffu) * 5.9604644775390625e-8f; /* 2^-24 */
        memcpy(&bits, &f, sizeof bits);
        bits |= sign;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* float -> IEEE half, round to nearest even; NaN stays NaN. */
static inline VT_HOST_DEVICE uint16_t vt_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u) /* NaN: keep a quiet payload bit */
        return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) {   /* below the smallest normal half: subnormal */
        if (absx < 0x33000000u) /* below half the smallest subnormal */
            return (uint16_t)sign;
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* value = m * 2^(e-150) = q * 2^-24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = absx - 0x38000000u; /* rebias exponent 127 -> 15 */
    uint32_t q = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

/* bfloat16 -> float, exact. */
static inline VT_HOST_DEVICE float vt_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* float -> bfloat16, round to nearest even; NaN stays NaN. */
static inline VT_HOST_DEVICE uint16_t vt_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#ifdef __cplusplus
}
#endif
#endif /* VT_DTYPE_H */
