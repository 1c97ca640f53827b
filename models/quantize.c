/* quantize.c - float rows into GGUF block formats (Q8_0, Q4_0, IQ4_NL,
 * Q4_K, Q6_K) and the plain float types, in ggml's block layouts. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "vt_internal.h"
#include "vt/vt_quantize.h"

static const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

bool vt_quantize_supported(vt_dtype dtype)
{
    return dtype == VT_F32 || dtype == VT_F16 || dtype == VT_BF16 || dtype == VT_Q8_0 || dtype == VT_Q4_0 ||
           dtype == VT_IQ4_NL || dtype == VT_Q4_K || dtype == VT_Q6_K;
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

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Q4_K (144 bytes per 256): f16 d, f16 dmin, 12 bytes of 6-bit scales and
 * mins of the eight groups of 32, then 128 bytes of nibbles (groups 2i and
 * 2i + 1 share bytes 32i .. 32i + 31, low and high nibble). Element x of
 * group g is d * sc[g] * q - dmin * mn[g], q in 0..15: per group the
 * minimum is min(0, min x) and the step (max x - min) / 15; d and dmin are
 * the largest of those over 63, sc and mn their 6-bit multiples. */
static void q4_k_block(const float *x, uint8_t *b)
{
    float step[8], low[8], max_step = 0, max_low = 0;
    for (int g = 0; g < 8; g++) {
        float lo = 0, hi = 0;
        for (int l = 0; l < 32; l++) {
            lo = fminf(lo, x[32 * g + l]);
            hi = fmaxf(hi, x[32 * g + l]);
        }
        low[g] = -lo;
        step[g] = (hi - lo) / 15.0f;
        max_step = fmaxf(max_step, step[g]);
        max_low = fmaxf(max_low, low[g]);
    }
    uint16_t dh = vt_f32_to_f16(max_step / 63.0f), mh = vt_f32_to_f16(max_low / 63.0f);
    float d = vt_f16_to_f32(dh), dmin = vt_f16_to_f32(mh);
    memcpy(b, &dh, 2);
    memcpy(b + 2, &mh, 2);
    uint8_t sc[8], mn[8], *scales = b + 4, *qs = b + 16;
    for (int g = 0; g < 8; g++) {
        sc[g] = (uint8_t)clampi(d > 0 ? (int)lrintf(step[g] / d) : 0, 0, 63);
        mn[g] = (uint8_t)clampi(dmin > 0 ? (int)lrintf(low[g] / dmin) : 0, 0, 63);
    }
    memset(scales, 0, 12);
    for (int g = 0; g < 8; g++) {
        if (g < 4) {
            scales[g] = sc[g];
            scales[g + 4] = mn[g];
        } else {
            scales[g + 4] = (uint8_t)((sc[g] & 0xF) | ((mn[g] & 0xF) << 4));
            scales[g - 4] |= (uint8_t)((sc[g] >> 4) << 6);
            scales[g] |= (uint8_t)((mn[g] >> 4) << 6);
        }
    }
    for (int g = 0; g < 8; g++) {
        float a = d * sc[g], m = dmin * mn[g], ia = a > 0 ? 1.0f / a : 0.0f;
        for (int l = 0; l < 32; l++) {
            int q = clampi((int)lrintf((x[32 * g + l] + m) * ia), 0, 15);
            uint8_t *p = qs + 32 * (g / 2) + l;
            *p = (uint8_t)(g & 1 ? (*p & 0x0F) | (q << 4) : q);
        }
    }
}

/* Q6_K (210 bytes per 256): 128 bytes of low nibbles, 64 bytes of high
 * bit pairs, 16 int8 scales of the groups of 16, f16 d. Element x of group
 * j is d * scale[j] * (q - 32), q in 0..63: per group the step is its
 * signed largest element over -32; d makes the largest step -128. */
static void q6_k_block(const float *x, uint8_t *b)
{
    float step[16], max_step = 0;
    for (int j = 0; j < 16; j++) {
        step[j] = signed_max(x + 16 * j, 16) / -32.0f;
        if (fabsf(step[j]) > fabsf(max_step))
            max_step = step[j];
    }
    float iscale = max_step != 0 ? -128.0f / max_step : 0.0f;
    uint16_t dh = vt_f32_to_f16(iscale != 0 ? 1.0f / iscale : 0.0f);
    float d = vt_f16_to_f32(dh);
    uint8_t *ql = b, *qh = b + 128, L[256];
    int8_t *scales = (int8_t *)(b + 192);
    memcpy(b + 208, &dh, 2);
    for (int j = 0; j < 16; j++) {
        scales[j] = (int8_t)clampi((int)lrintf(iscale * step[j]), -128, 127);
        float a = d * scales[j], ia = a != 0 ? 1.0f / a : 0.0f;
        for (int l = 0; l < 16; l++)
            L[16 * j + l] = (uint8_t)(clampi((int)lrintf(x[16 * j + l] * ia), -32, 31) + 32);
    }
    for (int h = 0; h < 2; h++) {
        const uint8_t *Lh = L + 128 * h;
        for (int l = 0; l < 32; l++) {
            ql[64 * h + l] = (uint8_t)((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
            ql[64 * h + l + 32] = (uint8_t)((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
            qh[32 * h + l] = (uint8_t)((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                                       ((Lh[l + 96] >> 4) << 6));
        }
    }
}

vt_status vt_quantize_row(vt_dtype dtype, const float *src, int64_t n, void *dst)
{
    const vt_dtype_info *info = vt_dtype_get(dtype);
    if (!vt_quantize_supported(dtype) || !info || n < 0 || n % info->block_elems)
        return vt_set_error(VT_E_INVALID_ARG, "vt_quantize_row: cannot encode %lld elements as %s", (long long)n,
                            vt_dtype_name(dtype));
    if (n > 0 && (!src || !dst))
        return vt_set_error(VT_E_INVALID_ARG, "vt_quantize_row: NULL src or dst for %lld elements", (long long)n);
    /* A block's scale comes from its largest element: a NaN or an infinity
     * would make it NaN and its codes float-to-int conversions of NaN. */
    for (int64_t i = 0; info->quantized && i < n; i++)
        if (!isfinite(src[i]))
            return vt_set_error(VT_E_INVALID_ARG,
                                "vt_quantize_row: element %lld is %g: %s blocks hold finite values only", (long long)i,
                                (double)src[i], vt_dtype_name(dtype));
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
    case VT_Q4_K:
    case VT_Q6_K:
        for (int64_t i = 0; i < n / 256; i++) {
            if (dtype == VT_Q4_K)
                q4_k_block(src + 256 * i, out + i * info->block_bytes);
            else
                q6_k_block(src + 256 * i, out + i * info->block_bytes);
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
