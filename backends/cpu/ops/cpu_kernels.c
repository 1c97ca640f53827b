/* cpu_kernels.c - the cpu backend's kernel table: (op, signature) ->
 * kernel, assembled once from the family tables. This table is what
 * `vtctl ops cpu` lists and what the portable CPU tier can run. */
#include "config.h"

#include <pthread.h>

#include "cpu_ops.h"

/* The catalogue's op families, in its order (core/ops/<family>.c). */
static const vt_kernel_family families[] = {
    {vt_cpu_kernels_convert, &vt_cpu_n_kernels_convert}, {vt_cpu_kernels_elementwise, &vt_cpu_n_kernels_elementwise},
    {vt_cpu_kernels_rows, &vt_cpu_n_kernels_rows},       {vt_cpu_kernels_conv, &vt_cpu_n_kernels_conv},
    {vt_cpu_kernels_matmul, &vt_cpu_n_kernels_matmul},   {vt_cpu_kernels_attention, &vt_cpu_n_kernels_attention},
    {vt_cpu_kernels_select, &vt_cpu_n_kernels_select},   {vt_cpu_kernels_gather, &vt_cpu_n_kernels_gather},
};

#define MAX_ROWS 1024
static vt_kernel table[MAX_ROWS];
static uint32_t n_table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void assemble(void)
{
    n_table = vt_kernel_families_join(families, sizeof families / sizeof families[0], table, MAX_ROWS);
}

const vt_kernel *vt_cpu_kernel_table(uint32_t *n)
{
    pthread_once(&once, assemble);
    *n = n_table;
    return table;
}
