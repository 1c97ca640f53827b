/* rocm_launch.h - extern "C" launchers of the rocm backend's kernels.
 * Each queues its kernel on stream and returns the launch status; none
 * synchronises. Shapes were checked by the core; values in device memory
 * by the check kernels below, queued first. */
#ifndef VT_ROCM_LAUNCH_H
#define VT_ROCM_LAUNCH_H

#include <stdint.h>

#include "rocm_error.h"
#include "vt_hip.h"

#include <vt/vt_params.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copy (kernels_convert.hip): dst[i] = cast(src[i]) for n elements; dtypes
 * f32 (0), f16 (1), bf16 (30). */
hipError_t vt_rocm_launch_cast(const void *src, uint32_t src_dtype, void *dst, uint32_t dst_dtype, int64_t n,
                               hipStream_t stream);

/* Add (kernels_elementwise.hip): y[i] = a[i] + b[i % nb] for n f32 elements. */
hipError_t vt_rocm_launch_add_f32(const float *a, const float *b, float *y, int64_t n, int64_t nb, hipStream_t stream);

/* MatMul (kernels_matmul.hip): y[r, c] = sum_i x[r, i] * W[c, i]; x f32
 * [n, k], W f32/f16/bf16 [m, k]. */
hipError_t vt_rocm_launch_matmul_dense(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                                       int64_t k, hipStream_t stream);

/* The elementwise family's f32 ops (kernels_elementwise.hip). */
#define VT_ROCM_UNARY_SCALE   0
#define VT_ROCM_UNARY_SILU    1
#define VT_ROCM_UNARY_GELU    2
#define VT_ROCM_UNARY_SIGMOID 3

/* y[i] = f(x[i]) for n elements; s is Scale's factor. */
hipError_t vt_rocm_launch_unary(int kind, const float *x, float *y, int64_t n, float s, hipStream_t stream);

/* y[i] = a[i] * b[i % nb]. */
hipError_t vt_rocm_launch_mul_f32(const float *a, const float *b, float *y, int64_t n, int64_t nb, hipStream_t stream);

/* y[i] = silu(g[i]) * u[i]. */
hipError_t vt_rocm_launch_swiglu(const float *g, const float *u, float *y, int64_t n, hipStream_t stream);

/* GdnGate: g = A[h] * softplus(a + dt_bias[h]), beta = sigmoid(b), h = i % H. */
hipError_t vt_rocm_launch_gdn_gate(const float *a, const float *dt_bias, const float *A, const float *b, float *g,
                                   float *beta, int64_t n, int64_t H, hipStream_t stream);

/* MoeCombine: y[t,j] = sum_i w[t,i] * h[t,i,j]. */
hipError_t vt_rocm_launch_moe_combine(const float *h, const float *w, float *y, int64_t T, int64_t K, int64_t m,
                                      hipStream_t stream);

/* Row ops over the last axis (kernels_rows.hip). */
#define VT_ROCM_NORM_RMS   0 /* x / sqrt(mean(x^2) + eps) * w (w may be NULL) */
#define VT_ROCM_NORM_L2    1 /* x / sqrt(sum(x^2) + eps) */
#define VT_ROCM_NORM_GATED 2 /* x / sqrt(mean(x^2) + eps) * w * silu(z) */

/* One of the norms above over rows of length n. */
hipError_t vt_rocm_launch_norm(int kind, const float *x, const float *w, const float *z, float *y, int64_t rows,
                               int64_t n, float eps, hipStream_t stream);

/* Softmax of x*scale + mask (mask NULL, or mask_elems trailing elements
 * broadcast over the leading ones); an all -inf row gives zeros. Writes
 * nothing when the error word err (may be NULL) holds an error. */
hipError_t vt_rocm_launch_softmax(const float *x, const float *mask, int64_t mask_elems, float *y, int64_t rows,
                                  int64_t n, float scale, const vt_rocm_err *err, hipStream_t stream);

/* Softmax's refusal scan of rows [row0, row0 + rows) (rows < 2^30,
 * n < 2^32): the first logit x*scale + mask of +inf, or NaN from infinite
 * operands, goes into the queue's error word err as op's error
 * (VT_ROCM_ERR_SOFTMAX_*: x is +inf, the mask is, the logit is +inf, NaN). */
hipError_t vt_rocm_launch_softmax_scan(const float *x, const float *mask, int64_t mask_elems, int64_t row0,
                                       int64_t rows, int64_t n, float scale, vt_rocm_err *err, uint32_t op,
                                       hipStream_t stream);

/* Softmax with its +inf scan for few long rows: nb blocks per row (the
 * scan, the slices' maxima and sums into part, rows x nb float pairs of
 * scratch, then the output). */
hipError_t vt_rocm_launch_softmax_split(const float *x, const float *mask, int64_t mask_elems, float *y, int64_t rows,
                                        int64_t n, int64_t nb, float scale, void *part, vt_rocm_err *err, uint32_t op,
                                        hipStream_t stream);

/* Rope over x [T,H,d] at positions pos[T]; neox: pairs (i, i+n_rot/2). */
hipError_t vt_rocm_launch_rope(const float *x, const int32_t *pos, float *y, int64_t T, int64_t H, int64_t d,
                               int32_t n_rot, float theta, int neox, hipStream_t stream);

/* IndexSelect (kernels_gather.hip); KvCacheWrite, Attention and
 * DsaIndexerLogits (kernels_attention.hip). */

/* IndexSelect as bytes: dst[o, j, :] = src[o, idx[j], :], rows of row_bytes. */
hipError_t vt_rocm_launch_index_select(const void *src, const void *idx, int idx_wide, void *dst, int64_t outer,
                                       int64_t n_src, int64_t n_idx, int64_t row_bytes, hipStream_t stream);

/* KvCacheWrite: cache[slot[t], :] = convert(k[t, :]) for rows of n f32
 * values; slot -1 skips. cache dtype f32/f16/bf16 (vt_dtype id). */
hipError_t vt_rocm_launch_kv_write(const float *k, const int32_t *slots, void *cache, uint32_t cache_dtype, int64_t T,
                                   int64_t n, hipStream_t stream);

/* KvCacheWrite of k [T, nk] and v [T, nv] in one kernel that also checks
 * the slots (each in [-1, limit), else the first offence goes to err and
 * nothing is written), for T up to VT_ROCM_KV_FUSED_MAX_T: every block
 * reads all T slots. */
#define VT_ROCM_KV_FUSED_MAX_T 64
hipError_t vt_rocm_launch_kv_write_checked(vt_rocm_err *err, uint32_t op, const int32_t *slots, int64_t limit,
                                           const float *k, const float *v, void *k_cache, void *v_cache,
                                           uint32_t cache_dtype, int64_t T, int64_t nk, int64_t nv, hipStream_t stream);

/* Attention (see SPEC 7, op 30). kv dtype f32/f16/bf16. Up to
 * VT_ROCM_ATTN_SPLIT_MAX_T queries (decode) are split over chunks of keys
 * when scratch (vt_rocm_attention_scratch_bytes of the shape, non-zero) is
 * given; otherwise one block per (query, head). */
#define VT_ROCM_ATTN_SPLIT_MAX_T 16
uint64_t vt_rocm_attention_scratch_bytes(int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv);
hipError_t vt_rocm_launch_attention(const float *q, const void *k, const void *v, uint32_t kv_dtype, const int32_t *pos,
                                    float *o, int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv,
                                    float scale, int32_t window, void *scratch, hipStream_t stream);

/* Attention for decode (kernels_attention_decode.hip): up to
 * VT_ROCM_ATTN_SPLIT_MAX_T queries over an f16/bf16 cache with d = dv in
 * {64, 128, 256} and Hq / Hkv in {1, 2, 4, 8}; each K and V row read once
 * (16-byte loads) for the query heads of its kv head (f16, d 64 or 128 on
 * NVIDIA sm_80+: on matrix instructions). The scratch bytes are
 * 0 when it does not take the shape; *taken = 0 (nothing queued) when it
 * does not take the shape or the alignments (q, k, v 16-byte aligned).
 * done: T * Hkv zeroed counters that the kernel leaves zero (a queue's
 * counters), or NULL: the ones in scratch, zeroed first on the stream. */
uint64_t vt_rocm_attention_decode_scratch_bytes(int64_t T, int64_t Hq, int64_t Hkv, int64_t S, int64_t d, int64_t dv,
                                                uint32_t kv_dtype);
hipError_t vt_rocm_launch_attention_decode(const float *q, const void *k, const void *v, uint32_t kv_dtype,
                                           const int32_t *pos, float *o, int64_t T, int64_t Hq, int64_t Hkv, int64_t S,
                                           int64_t d, int64_t dv, float scale, int32_t window, void *scratch,
                                           uint32_t *done, hipStream_t stream, int *taken);

/* DsaIndexerLogits (op 34); k dtype f32/f16/bf16. */
hipError_t vt_rocm_launch_dsa_logits(const float *q, const void *k, uint32_t k_dtype, const float *w,
                                     const int32_t *start, const int32_t *end, float *logits, int64_t T, int64_t H,
                                     int64_t d, int64_t S, hipStream_t stream);

/* The causal convolutions (kernels_conv.hip). bias may be NULL. */

/* CausalConv1dSpecUpdate (op 7). */
hipError_t vt_rocm_launch_conv_spec(const float *x, const float *w, const float *bias, const int32_t *slots,
                                    const int32_t *accepted, float *y, float *state, int64_t B, int64_t D, int64_t T,
                                    int64_t W, int64_t L, int silu, hipStream_t stream);

/* CausalConv1d (op 8): init may be NULL (zeros). */
hipError_t vt_rocm_launch_conv_prefill(const float *x, const float *w, const float *bias, const float *init, float *y,
                                       float *state_out, int64_t B, int64_t D, int64_t T, int64_t W, int silu,
                                       hipStream_t stream);

/* CausalConv1dUpdate (op 9): slots may be NULL (row b). */
hipError_t vt_rocm_launch_conv_update(const float *x, const float *w, const float *bias, const int32_t *slots, float *y,
                                      float *state, int64_t B, int64_t D, int64_t T, int64_t W, int silu,
                                      hipStream_t stream);

/* GatedDeltaRule (op 32, kernels_attention_gdn.hip): dk at most VT_ROCM_GDR_MAX_DK.
 * scratch: vt_rocm_gated_delta_scratch_bytes of the call (16-byte aligned),
 * or NULL; with it, per-sequence slots and dk = dv = 128 from 32 tokens on
 * run the chunked form. */
#define VT_ROCM_GDR_MAX_DK 256
uint64_t vt_rocm_gated_delta_scratch_bytes(int64_t B, int64_t T, int64_t HV, int64_t dk, int64_t dv, int per_token);
hipError_t vt_rocm_launch_gated_delta(const float *q, const float *k, const float *v, const float *g, const float *beta,
                                      const int32_t *slots, const int32_t *accepted, int per_token, float *o,
                                      float *state, int64_t B, int64_t T, int64_t H, int64_t HV, int64_t dk, int64_t dv,
                                      int l2norm, void *scratch, hipStream_t stream);
/* GatedDeltaRule for decode with the slot check folded in (one launch; the
 * same offence recorded in err as vt_rocm_launch_check_gdr's, no state
 * written and zero outputs on a bad call): slots and accepted as the
 * caller passed them, N state rows. *taken = 0 (nothing queued) unless dk =
 * 128, dv % 4 = 0, at most VT_ROCM_GDR_FUSED_MAX_SLOTS slots, the shape is
 * not the chunked form's and v, o, state are 16-byte aligned. */
#define VT_ROCM_GDR_FUSED_MAX_SLOTS 64
hipError_t vt_rocm_launch_gated_delta_checked(vt_rocm_err *err, uint32_t op, const float *q, const float *k,
                                              const float *v, const float *g, const float *beta, const int32_t *slots,
                                              const int32_t *accepted, int per_token, float *o, float *state, int64_t B,
                                              int64_t T, int64_t H, int64_t HV, int64_t dk, int64_t dv, int64_t N,
                                              int l2norm, hipStream_t stream, int *taken);

/* Ops over any dtype: Dequantize (kernels_convert.hip), GetRows
 * (kernels_gather.hip), MatMul and MoeExpertMatMul (kernels_matmul.hip). A
 * dtype is plain (block_elems 1) or a block format of block_elems elements
 * in block_bytes bytes. */

/* Dequantize (op 41): dst[i] = element i of src, as f32/f16/bf16. */
hipError_t vt_rocm_launch_dequantize(const void *src, uint32_t src_dtype, int block_elems, int block_bytes, void *dst,
                                     uint32_t dst_dtype, int64_t n, hipStream_t stream);

/* Dequantize of n elements (whole blocks, a multiple of 8) of a block
 * format into bf16 pairs for the prefill GEMM: the high parts into dst
 * [0, n), the rest into dst [n, 2 n) (16-byte aligned);
 * hipErrorInvalidValue, nothing queued, for anything else. */
hipError_t vt_rocm_launch_dequantize_pair(const void *src, uint32_t src_dtype, void *dst, int64_t n,
                                          hipStream_t stream);

/* GetRows (op 40): dst[i, :] = table[idx[i], :] for rows of n elements. */
hipError_t vt_rocm_launch_get_rows(const void *table, uint32_t table_dtype, int block_elems, int block_bytes,
                                   const int32_t *idx, void *dst, uint32_t dst_dtype, int64_t n_idx, int64_t n,
                                   hipStream_t stream);

/* MatMul (op 20) with any weight dtype: y[r, c] = sum_i x[r, i] W[c, i]. */
hipError_t vt_rocm_launch_matmul_q(const float *x, const void *w, uint32_t w_dtype, int block_elems, int block_bytes,
                                   float *y, int64_t n, int64_t m, int64_t k, hipStream_t stream);

/* MoeExpertMatMul (op 23): y[t, i, :] = W[ids[t, i]] . x[t] (x[t, i] when
 * x_per_slot). */
hipError_t vt_rocm_launch_moe_matmul(const float *x, int x_per_slot, const void *w, uint32_t w_dtype, int block_elems,
                                     int block_bytes, const int32_t *ids, float *y, int64_t T, int64_t K, int64_t m,
                                     int64_t k, hipStream_t stream);

/* MoeExpertMatMul grouped by expert (kernels_matmul_moe.hip), for 2 to
 * 2048 pairs T x K of the weight types and token counts where it is the
 * faster path (q4_0 and q4_k from 2 tokens, q8_0, q6_k and f16 from 8): the
 * pairs are grouped per expert on the device and each selected expert's
 * rows are read once for all its pairs. tab: scratch of
 * vt_rocm_moe_grouped_scratch_bytes (0: not taken); ids already checked.
 * *taken = 0 (nothing queued) when the dtype, shapes or alignments do not
 * fit. */
uint64_t vt_rocm_moe_grouped_scratch_bytes(uint32_t w_dtype, int64_t T, int64_t K);
hipError_t vt_rocm_launch_moe_grouped(const float *x, int x_per_slot, const void *w, uint32_t w_dtype,
                                      const int32_t *ids, void *tab, float *y, int64_t T, int64_t K, int64_t m,
                                      int64_t k, hipStream_t stream, int *taken);

/* MoeExpertMatMul at one token with the check of the ids folded in
 * (kernels_matmul_moe.hip; one launch; the offence recorded in err as
 * vt_rocm_launch_check_range's, and a bad call computes with expert 0 as
 * its checked copy would): ids [K] as the caller passed them, E experts.
 * *taken = 0 (nothing queued) unless the matrix-instruction kernel takes
 * w_dtype and the shapes, or w_dtype is q4_0, q8_0, q4_k or q6_k with k a
 * multiple of its block and of 8, x 16-byte aligned. */
hipError_t vt_rocm_launch_moe_one_checked(vt_rocm_err *err, uint32_t op, const float *x, int x_per_slot, const void *w,
                                          uint32_t w_dtype, const int32_t *ids, int64_t E, float *y, int64_t K,
                                          int64_t m, int64_t k, hipStream_t stream, int *taken);

/* MoeExpertMatMul at 2 <= T tokens of K slots, T K <= 96 pairs, as the
 * slots of the one-token matrix-instruction kernel (each pair reads its
 * expert's rows; an expert two tokens chose comes from L2 the second
 * time), the ids checked in it as vt_rocm_launch_moe_one_checked does.
 * *taken = 0 (nothing queued) unless that kernel takes w_dtype and the
 * shapes. */
hipError_t vt_rocm_launch_moe_slots_checked(vt_rocm_err *err, uint32_t op, const float *x, int x_per_slot,
                                            const void *w, uint32_t w_dtype, const int32_t *ids, int64_t E, float *y,
                                            int64_t T, int64_t K, int64_t m, int64_t k, hipStream_t stream, int *taken);

/* MoeExpertMatMul at 2 to 512 pairs T x K (T >= 2) of up to 1024 experts on the
 * matrix-instruction kernel (kernels_mmv_mma.hip, NVIDIA builds; every
 * block format, f16 and bf16, k a multiple of 256): a first kernel checks
 * the ids as vt_rocm_launch_moe_one_checked does, groups the pairs by
 * expert and splits x into scratch (vt_rocm_moe_chunks_scratch_bytes, 0:
 * not taken; 16-byte aligned); then each selected expert's rows are read
 * once for all its pairs, two pairs per pass. *taken = 0 (nothing queued)
 * when the weight type, shapes, alignments or device do not fit. */
uint64_t vt_rocm_moe_chunks_scratch_bytes(uint32_t w_dtype, int64_t T, int64_t K, int64_t k, int x_per_slot);
hipError_t vt_rocm_launch_moe_chunks_checked(vt_rocm_err *err, uint32_t op, const float *x, int x_per_slot,
                                             const void *w, uint32_t w_dtype, const int32_t *ids, int64_t E, float *y,
                                             int64_t T, int64_t K, int64_t m, int64_t k, void *scratch,
                                             hipStream_t stream, int *taken);

/* The decode products (kernels_mmv.hip): MatMul and MoeExpertMatMul with
 * the weight read once for up to 8 columns of x. *taken = 0 (nothing
 * queued) when the dtype, shapes or alignments do not fit: the caller then
 * launches its own kernel. */
hipError_t vt_rocm_launch_mmv(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                              int64_t k, hipStream_t stream, int *taken);
hipError_t vt_rocm_launch_mmv_moe(const float *x, int x_per_slot, const void *w, uint32_t w_dtype, const int32_t *ids,
                                  float *y, int64_t T, int64_t K, int64_t m, int64_t k, hipStream_t stream, int *taken);

/* The prefill products (kernels_gemm.hip): MatMul on matrix instructions
 * (wgmma on compute capability 9.0 in builds with sm_90a code, else
 * mma.sync; NVIDIA sm_80 and newer) for W bf16, f16 from
 * VT_ROCM_GEMM_MIN_N rows of x on, q4_0, q8_0 from VT_ROCM_GEMM_MIN_N_Q
 * on (where it beat the row kernels on the H200: m = k = 4096, bf16 n = 32
 * 115 us against 177 us, n = 16 113 against 93; q4_0 n = 16 195 against
 * 279); x is split into a high and a low 16-bit part by a pass into
 * scratch first, so the sums keep about 16 (bf16) or 22 (f16, the block
 * formats) bits of x. */
#define VT_ROCM_GEMM_MIN_N   32
#define VT_ROCM_GEMM_MIN_N_Q 16
/* The other block formats (sm_90a: W dequantized into bf16 pairs, then
 * the bf16 kernel; W of at most vt_rocm_gemm_deq_bytes as pairs, 256 MiB,
 * rocm_backend.h) from each format's own width on (kernels_gemm.hip,
 * deq_min_n), where the pass over W costs less than the decode kernels'
 * reading W once per 8 rows of x. */

/* Whether the GEMM path takes y[n,m] = x[n,k] W[m,k]^T (dtype, shape,
 * alignment of x and W, the architecture of device dev, the current one);
 * 0: the caller's path. */
int vt_rocm_gemm_takes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k, const void *x, const void *w, int dev);

/* Scratch bytes of the GEMM path for y[n,m] = x[n,k] W[m,k]^T of w_dtype:
 * the split of x, and for the dequantized formats W as bf16 pairs. */
uint64_t vt_rocm_gemm_scratch_bytes(uint32_t w_dtype, int64_t n, int64_t m, int64_t k);

/* Queue the split of x into scratch and the product on device dev, the
 * current one (only when vt_rocm_gemm_takes said so for dev). */
hipError_t vt_rocm_launch_gemm(const float *x, const void *w, uint32_t w_dtype, float *y, int64_t n, int64_t m,
                               int64_t k, void *scratch, int dev, hipStream_t stream);

/* Selection (kernels_select.hip). */

/* MoeRouter's largest expert count (per-thread arrays). */
#define VT_ROCM_ROUTER_MAX_E 1024

/* Refusal scan of rows of x (operand name: VT_ROCM_NAME_*): the first NaN
 * (row-major), or when sampling a +inf or a row with nothing finite, goes
 * into the queue's error word err as op's error. */
hipError_t vt_rocm_launch_scan(const float *x, int64_t rows, int64_t n, int sampling, vt_rocm_err *err, uint32_t op,
                               uint32_t name, hipStream_t stream);

/* vt_rocm_launch_scan over few long rows, nb blocks per row
 * (vt_rocm_argmax_split_blocks), fin: rows x nb bytes of scratch. */
hipError_t vt_rocm_launch_scan_split(const float *x, int64_t rows, int64_t n, int64_t nb, int sampling, void *fin,
                                     vt_rocm_err *err, uint32_t op, uint32_t name, hipStream_t stream);

/* Argmax per row (ties to the lower index). */
hipError_t vt_rocm_launch_argmax(const float *x, int64_t rows, int64_t n, int32_t *out, hipStream_t stream);

/* Blocks per row of the one-pass Argmax over few long rows, 0 when the
 * shape takes the scan and one block per row. */
int64_t vt_rocm_argmax_split_blocks(int64_t rows, int64_t n);

/* Argmax with the scan's NaN refusal in one pass: nb blocks per row, their
 * candidates in part (rows x nb x 8 bytes of scratch). */
hipError_t vt_rocm_launch_argmax_checked(const float *x, int64_t rows, int64_t n, int64_t nb, void *part, int32_t *out,
                                         vt_rocm_err *err, uint32_t op, uint32_t name, hipStream_t stream);

/* Sort each row's (value, index) candidates into scratch (rows x p pairs,
 * p a power of two >= n): value descending, ties by ascending index. */
hipError_t vt_rocm_launch_sort_rows(const float *x, int64_t rows, int64_t n, int64_t p, void *scratch,
                                    hipStream_t stream);

/* One pass of the sliced top-kk selection (kk <= sl / 2, sl a power of
 * two <= VT_ROCM_SLICE_MAX): each row's m candidates (x with their indices
 * when x is given, else in: rows x m pairs) in slices of sl, each slice's
 * kk best, sorted, to out (rows x ceil(m / sl) x kk pairs). */
#define VT_ROCM_SLICE_MAX 4096
hipError_t vt_rocm_launch_slice_topk(const float *x, const void *in, int64_t rows, int64_t m, int64_t sl, int64_t kk,
                                     void *out, hipStream_t stream);

/* TopK from sorted rows: the first k values and indices of each row. */
hipError_t vt_rocm_launch_topk_out(const void *scratch, int64_t rows, int64_t p, int64_t k, float *values,
                                   int32_t *indices, hipStream_t stream);

/* Sample from sorted rows (temperature > 0); prob is rows x p doubles. */
hipError_t vt_rocm_launch_sample(const void *scratch, int64_t rows, int64_t n, int64_t p,
                                 const vt_params_sample *params, void *prob, int32_t *tokens, hipStream_t stream);

/* MoeRouter per token (E <= VT_ROCM_ROUTER_MAX_E); bias may be NULL. */
hipError_t vt_rocm_launch_router(const float *logits, const float *bias, int64_t T, int64_t E, int32_t k, int32_t score,
                                 int32_t renormalize, float routed_scale, int32_t *ids, float *weights,
                                 hipStream_t stream);

/* Data checks (kernels_check.hip), one block each, queued before the
 * kernel they guard; the first offence goes into err as op's error. */

/* Every v[i] (i32, or i64 when wide) in [0, hi); dim >= 0 names the source
 * dim (IndexSelect). safe[i] = v[i] when all are, else 0 (same width). */
hipError_t vt_rocm_launch_check_range(vt_rocm_err *err, uint32_t op, uint32_t name, const void *v, int wide, int64_t n,
                                      int64_t hi, int64_t dim, void *safe, hipStream_t stream);

/* Every slot -1 or in [0, limit), with unique no slot >= 0 twice; with
 * accepted, accepted[b] in [1, acc_max] where slots[b] >= 0. safe[i] =
 * slots[i] when the call is valid, else -1. */
hipError_t vt_rocm_launch_check_slots(vt_rocm_err *err, uint32_t op, uint32_t name, const int32_t *slots, int64_t n,
                                      int64_t limit, int unique, const int32_t *accepted, int64_t acc_max,
                                      int32_t *safe, hipStream_t stream);

/* GatedDeltaRule's slots (B, or B x T when per_token) and accepted counts
 * (per_token), as GatedDeltaRule reads them; safe copies as above (slots
 * -1 and accepted 1 when the call is bad). */
hipError_t vt_rocm_launch_check_gdr(vt_rocm_err *err, uint32_t op, const int32_t *slots, const int32_t *accepted,
                                    int per_token, int64_t B, int64_t T, int64_t N, int32_t *safe_slots,
                                    int32_t *safe_accepted, hipStream_t stream);

/* Move the error in from (if any) into to (unless to has one). */
hipError_t vt_rocm_launch_err_move(vt_rocm_err *from, vt_rocm_err *to, hipStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
