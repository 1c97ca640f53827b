// harness_util.h - what the standalone GPU harnesses of the decode kernels
// (scripts/mmv-harness.cu, decode-harness.cu) share on top of
// harness_cuda.h: random weights of any dtype with the cpu plugin's
// decoders as their reference. Include after kernels_mmv.h and cpu_quant.h.
#ifndef VT_HARNESS_UTIL_H
#define VT_HARNESS_UTIL_H

#include "harness_cuda.h"
#include <cstdint>
#include <cstring>
#include <vector>

// f as f16 into the two bytes at p (little endian).
static void put_half(uint8_t *p, float f)
{
    uint16_t h = vt_f32_to_f16(f);
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

// Random weights of dtype dt, rows x k: random bytes with sane scale
// fields (f32/f16/bf16: values in [-1, 1)).
static std::vector<uint8_t> make_w(uint32_t dt, int64_t rows, int64_t k)
{
    const int be = vt_mmv::blk_elems(dt), bb = vt_mmv::blk_bytes(dt);
    const int64_t nb = rows * (k / be);
    std::vector<uint8_t> w((size_t)(nb * bb));
    for (auto &b : w)
        b = (uint8_t)rnd();
    for (int64_t i = 0; i < nb; i++) {
        uint8_t *p = w.data() + i * bb;
        const float s = 0.002f + 0.01f * (frnd() + 1.0f);
        switch (dt) {
        case VT_F32:
            for (int j = 0; j < 8; j++) {
                float f = frnd();
                memcpy(p + 4 * j, &f, 4);
            }
            break;
        case VT_F16:
            for (int j = 0; j < 8; j++)
                put_half(p + 2 * j, frnd());
            break;
        case VT_BF16:
            for (int j = 0; j < 8; j++) {
                uint16_t h = vt_f32_to_bf16(frnd());
                p[2 * j] = (uint8_t)h, p[2 * j + 1] = (uint8_t)(h >> 8);
            }
            break;
        case 2:
        case 6:
        case 8:
        case 20:
        case 23: put_half(p, s); break;
        case 3:
        case 7:
        case 12:
        case 13:
            put_half(p, s);
            put_half(p + 2, s * 0.5f);
            break;
        case 10:
            put_half(p + 80, s);
            put_half(p + 82, s * 0.5f);
            break;
        case 11: put_half(p + 108, s); break;
        case 14: put_half(p + 208, s); break;
        case 39: p[0] = (uint8_t)(120 + rnd() % 8); break;
        }
    }
    return w;
}

// One row of k weights of dtype dt at row, as floats, by the cpu plugin's
// scalar decoders.
static void deq_row(uint32_t dt, const uint8_t *row, int64_t k, float *out)
{
    const int be = vt_mmv::blk_elems(dt), bb = vt_mmv::blk_bytes(dt);
    if (dt == VT_F32) {
        memcpy(out, row, 4 * k);
        return;
    }
    if (dt == VT_F16 || dt == VT_BF16) {
        for (int64_t i = 0; i < k; i++) {
            uint16_t h = (uint16_t)(row[2 * i] | (row[2 * i + 1] << 8));
            out[i] = dt == VT_F16 ? vt_f16_to_f32(h) : vt_bf16_to_f32(h);
        }
        return;
    }
    const vt_cpu_qformat *f = vt_cpu_qformat_get(dt);
    for (int64_t b = 0; b < k / be; b++)
        for (int s = 0; s < be / 32; s++)
            vt_cpu_form_decode(f, row + b * bb, s, out + b * be + 32 * s);
}

#endif
