/* vt_quantize.h - encoding float rows into GGUF block formats.
 *
 * The inverse of the decoders the backends carry: a row of n floats (n a
 * multiple of the format's block) becomes n / block_elems blocks in the
 * layout ggml writes. Used by model writers (vtctl mkmodel) and tests. */
#ifndef VT_QUANTIZE_H
#define VT_QUANTIZE_H

#include <stdbool.h>
#include <stdint.h>

#include <vt/vt_dtype.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when vt_quantize_row can write dtype: f32, f16, bf16, q8_0, q4_0,
 * iq4_nl, q4_k, q6_k. */
bool vt_quantize_supported(vt_dtype dtype);

/* Encode n floats of src into dst as dtype (plain types are converted,
 * rounding to nearest even). VT_E_INVALID_ARG, dst untouched, when dtype
 * is not supported, n is not a multiple of its block, src or dst is NULL,
 * or (block formats) an element is NaN or infinite, named. dst holds the
 * row's bytes (vt_dtype_row_bytes). */
VT_WARN_UNUSED vt_status vt_quantize_row(vt_dtype dtype, const float *src, int64_t n, void *dst);

#ifdef __cplusplus
}
#endif
#endif /* VT_QUANTIZE_H */
