/* rocm_kernels.c - the rocm backend's kernel table, assembled once from
 * the family tables. Static: `vtctl ops rocm` lists it without a device. */
#include "config.h"

#include <pthread.h>

#include "rocm_common.h"

/* The catalogue's op families, in its order. */
static const vt_kernel_family families[] = {
    {vt_rocm_kernels_convert, &vt_rocm_n_kernels_convert},
    {vt_rocm_kernels_elementwise, &vt_rocm_n_kernels_elementwise},
    {vt_rocm_kernels_rows, &vt_rocm_n_kernels_rows},
    {vt_rocm_kernels_conv, &vt_rocm_n_kernels_conv},
    {vt_rocm_kernels_matmul, &vt_rocm_n_kernels_matmul},
    {vt_rocm_kernels_attention, &vt_rocm_n_kernels_attention},
    {vt_rocm_kernels_select, &vt_rocm_n_kernels_select},
    {vt_rocm_kernels_gather, &vt_rocm_n_kernels_gather},
};

#define MAX_ROWS 1024
static vt_kernel table[MAX_ROWS];
static uint32_t n_table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void assemble(void)
{
    n_table = vt_kernel_families_join(families, sizeof families / sizeof families[0], table, MAX_ROWS);
}

const vt_kernel *vt_rocm_kernel_table(uint32_t *n)
{
    pthread_once(&once, assemble);
    *n = n_table;
    return table;
}
