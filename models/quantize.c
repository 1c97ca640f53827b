/* quantize.c - float rows into GGUF block formats (Q8_0, Q4_0, IQ4_NL) and
 * the plain float types, in ggml's block layouts. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "vt_internal.h"
#include "vt/vt_quantize.h"

static const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

bool vt_quantize_supported(vt_dtype dtype)
{
    return dtype == VT_F32 || dtype == VT_F16 || dtype == VT_BF16 || dtype == VT_Q8_0 || dtype == VT_Q4_0 ||
           dtype == VT_IQ4_NL;
}

static void put_half(uint8_t *p, float v)
{
    uint16_t h = vt_f32_to_f16(v);
    memcpy(p, &h, 2);
}

/* Q8_0: f16 d = amax / 127, then 32 int8 round(x / d). */
static void q8_0_block(const float *x, uint8_t *b)
{
    float amax = 0;
    for (int j = 0; j < 32; j++)
        amax = fmaxf(amax, fabsf(x[j]));
    float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
    put_half(b, d);
    for (int j = 0; j < 32; j++)
        b[2 + j] = (uint8_t)(int8_t)lrintf(x[j] * id);
}

/* The element of largest magnitude, with its sign. */
static float signed_max(const float *x, int n)
{
    float amax = 0, max = 0;
    for (int j = 0; j < n; j++)
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    return max;
}

/* Q4_0: d = max / -8, codes min(15, x / d + 8.5); element j in the low
 * nibble of byte j, element j + 16 in its high nibble. */
static void q4_0_block(const float *x, uint8_t *b)
{
    float d = signed_max(x, 32) / -8.0f, id = d ? 1.0f / d : 0.0f;
    put_half(b, d);
    for (int j = 0; j < 16; j++) {
        int lo = (int)(x[j] * id + 8.5f), hi = (int)(x[j + 16] * id + 8.5f);
        lo = lo < 0 ? 0 : lo > 15 ? 15 : lo;
        hi = hi < 0 ? 0 : hi > 15 ? 15 : hi;
        b[2 + j] = (uint8_t)(lo | (hi << 4));
    }
}

/* IQ4_NL: d = max / -127, each element the nearest code book value. */
static void iq4_nl_block(const float *x, uint8_t *b)
{
    float d = signed_max(x, 32) / -127.0f, id = d ? 1.0f / d : 0.0f;
    put_half(b, d);
    uint8_t c[32];
    for (int j = 0; j < 32; j++) {
        float v = x[j] * id;
        int best = 0;
        for (int i = 1; i < 16; i++)
            if (fabsf(v - kvalues_iq4nl[i]) < fabsf(v - kvalues_iq4nl[best]))
                best = i;
        c[j] = (uint8_t)best;
    }
    for (int j = 0; j < 16; j++)
        b[2 + j] = (uint8_t)(c[j] | (c[j + 16] << 4));
}

vt_status vt_quantize_row(vt_dtype dtype, const float *src, int64_t n, void *dst)
{
    const vt_dtype_info *info = vt_dtype_get(dtype);
    if (!vt_quantize_supported(dtype) || !info || n < 0 || n % info->block_elems)
        return vt_set_error(VT_E_INVALID_ARG, "vt_quantize_row: cannot encode %lld elements as %s", (long long)n,
                            vt_dtype_name(dtype));
    uint8_t *out = dst;
    switch (dtype) {
    case VT_F32: memcpy(out, src, (size_t)n * sizeof(float)); break;
    case VT_F16:
        for (int64_t i = 0; i < n; i++) {
            uint16_t h = vt_f32_to_f16(src[i]);
            memcpy(out + 2 * i, &h, 2);
        }
        break;
    case VT_BF16:
        for (int64_t i = 0; i < n; i++) {
            uint16_t h = vt_f32_to_bf16(src[i]);
            memcpy(out + 2 * i, &h, 2);
        }
        break;
    default:
        for (int64_t i = 0; i < n / 32; i++) {
            uint8_t *b = out + i * info->block_bytes;
            if (dtype == VT_Q8_0)
                q8_0_block(src + 32 * i, b);
            else if (dtype == VT_Q4_0)
                q4_0_block(src + 32 * i, b);
            else
                iq4_nl_block(src + 32 * i, b);
        }
    }
    return VT_OK;
}
