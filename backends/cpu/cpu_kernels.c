/* cpu_kernels.c - the cpu backend's kernel table: (op, signature) ->
 * kernel, assembled once from the family tables. This table is what
 * `vtctl ops cpu` lists and what the portable CPU tier can run. */
#include "config.h"

#include <pthread.h>

#include "cpu_backend.h"

static const struct {
    const vt_kernel *rows;
    const uint32_t *n;
} families[] = {
    {vt_cpu_kernels_basic, &vt_cpu_n_kernels_basic},
    {vt_cpu_kernels_nn, &vt_cpu_n_kernels_nn},
    {vt_cpu_kernels_quant, &vt_cpu_n_kernels_quant},
};

#define MAX_ROWS 1024
static vt_kernel table[MAX_ROWS];
static uint32_t n_table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void assemble(void)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (uint32_t i = 0; i < *families[f].n && n_table < MAX_ROWS; i++)
            table[n_table++] = families[f].rows[i];
}

const vt_kernel *vt_cpu_kernel_table(uint32_t *n)
{
    pthread_once(&once, assemble);
    *n = n_table;
    return table;
}
