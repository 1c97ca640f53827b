// rocm_check_gdr.h - GatedDeltaRule's device check of its slots and
// accepted counts, as a block-wide device function: kernels_check.hip's
// check kernel runs it before the general kernels, the decode kernel of
// kernels_attention_gdn.hip runs it in every block itself (one launch).
// The offence reported is the one the check of vt 1 found: the lowest bad
// accepted count, else the lowest slot outside [-1, N), else the lowest
// slot that names a state row another active row also uses.
#ifndef VT_ROCM_CHECK_GDR_H
#define VT_ROCM_CHECK_GDR_H

#include "rocm_device.h"
#include "rocm_error.h"

// Every thread of the block calls it once per kernel (one barrier inside).
// Returns whether the call is bad; with report, thread 0 records the
// offence in err. B, T, N as GatedDeltaRule's shapes; acc only per_token.
__device__ inline bool vt_gdr_check(vt_rocm_err *err, bool report, uint32_t op, const int32_t *s, const int32_t *acc,
                                    int per_token, int64_t B, int64_t T, int64_t N)
{
    __shared__ unsigned long long first[3]; // accepted, range, shared: lowest index, or all ones
    const unsigned long long none = ~0ull;
    const int64_t n = per_token ? B * T : B, per_row = per_token ? T : 1;
    if (threadIdx.x < 3)
        first[threadIdx.x] = none;
    __syncthreads();
    auto acc_ok = [&](int64_t b) { return !per_token || (acc[b] >= 1 && (int64_t)acc[b] <= T); };
    // the state row that row reads (-1 when it reads none or its count is bad)
    auto read = [&](int64_t row) -> int64_t {
        if (!acc_ok(row))
            return -1;
        return per_token ? s[row * T + acc[row] - 1] : s[row];
    };
    // the first i' < i of another active row naming the same slot, else i
    auto other = [&](int64_t i) {
        const int64_t row = i / per_row;
        if (s[i] < 0 || read(row) < 0)
            return i;
        for (int64_t j = 0; j < i; j++) {
            const int64_t o = j / per_row;
            if (o != row && read(o) >= 0 && s[j] == s[i])
                return j;
        }
        return i;
    };
    if (per_token)
        for (int64_t b = threadIdx.x; b < B; b += blockDim.x)
            if (!acc_ok(b)) {
                atomicMin(&first[0], (unsigned long long)b);
                break;
            }
    bool range_found = false, shared_found = false;
    for (int64_t i = threadIdx.x; i < n && !(range_found && shared_found); i += blockDim.x) {
        const bool out = s[i] < -1 || (int64_t)s[i] >= N;
        if (out && !range_found) {
            atomicMin(&first[1], (unsigned long long)i);
            range_found = true;
        }
        if (!out && !shared_found && other(i) < i) {
            atomicMin(&first[2], (unsigned long long)i);
            shared_found = true;
        }
    }
    __syncthreads();
    const unsigned long long fa = first[0], fr = first[1], fs = first[2];
    if (report && threadIdx.x == 0) {
        if (fa != none)
            vt_rocm_err_set(err, VT_ROCM_ERR_GDR_ACCEPT, op, VT_ROCM_NAME_SLOTS, (int64_t)fa, acc[fa], T, 0);
        else if (fr != none)
            vt_rocm_err_set(err, VT_ROCM_ERR_GDR_SLOT, op, VT_ROCM_NAME_SLOTS, (int64_t)fr, s[fr], N, 0);
        else if (fs != none)
            vt_rocm_err_set(err, VT_ROCM_ERR_GDR_SHARED, op, VT_ROCM_NAME_SLOTS, s[fs], other((int64_t)fs) / per_row,
                            (int64_t)fs / per_row, 0);
    }
    return fa != none || fr != none || fs != none;
}

#endif
