/* cpu_slots.c - checks of the state-cache slots a call reads and writes
 * (CausalConv1dSpecUpdate, CausalConv1dUpdate, GatedDeltaRule): every
 * value in range, and no slot owned by two rows, so that rows can run in
 * parallel without racing on a cache row. */
#include "config.h"

#include <stdlib.h>

#include "cpu_ops.h"

vt_status vt_cpu_check_slots(uint32_t op, const char *operand, const int32_t *slots, int64_t rows, int64_t per_row,
                             int64_t n_slots, const unsigned char *row_active, char *why, size_t why_size)
{
    int64_t top = 0; /* 1 + the largest slot named: the owner table's size */
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < per_row; j++) {
            int32_t s = slots[r * per_row + j];
            if ((int64_t)s >= top)
                top = (int64_t)s + 1;
            if (s < -1 || (int64_t)s >= n_slots) {
                if (per_row == 1)
                    return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, op,
                                           "%s[%lld] = %d is outside [-1, %lld) (N state slots)", operand, (long long)r,
                                           s, (long long)n_slots);
                return vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, op,
                                       "%s[%lld,%lld] = %d is outside [-1, %lld) (N state slots)", operand,
                                       (long long)r, (long long)j, s, (long long)n_slots);
            }
        }
    if (n_slots <= 0 || rows <= 1)
        return VT_OK;
    /* Slots are i32, so top <= 2^31 whatever N (a [2^61, 0, 1] state is
     * valid and empty): the table never wraps. */
    int64_t *owner = top ? malloc((size_t)top * sizeof *owner) : NULL;
    if (top && !owner)
        return vt_cpu_op_error(VT_E_NO_MEMORY, why, why_size, op, "no host memory to check %lld slots", (long long)top);
    for (int64_t i = 0; i < top; i++)
        owner[i] = -1;
    vt_status st = VT_OK;
    for (int64_t r = 0; r < rows && st == VT_OK; r++) {
        if (row_active && !row_active[r])
            continue;
        for (int64_t j = 0; j < per_row; j++) {
            int32_t s = slots[r * per_row + j];
            if (s < 0)
                continue;
            if (owner[s] >= 0 && owner[s] != r) {
                st = vt_cpu_op_error(VT_E_INVALID_ARG, why, why_size, op,
                                     "%s: state slot %d belongs to rows %lld and %lld; a slot may belong to one row",
                                     operand, s, (long long)owner[s], (long long)r);
                break;
            }
            owner[s] = r;
        }
    }
    free(owner);
    return st;
}
