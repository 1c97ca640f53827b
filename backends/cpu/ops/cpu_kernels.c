/* cpu_kernels.c - the cpu backend's kernel table: (op, signature) ->
 * kernel, the family tables (ops/cpu_kernels_<family>.c) joined in the
 * catalogue's order by the one helper every such backend uses
 * (VT_KERNEL_TABLE_FROM_FAMILIES, vt_backend.h). This table is what
 * `vtctl ops cpu` lists and what the portable CPU tier can run. */
#include "config.h"

#include "cpu_ops.h"

/* Called once, from vt_plugin_entry's pthread_once (cpu_plugin.c). */
VT_KERNEL_TABLE_FROM_FAMILIES(vt_cpu_kernel_table, vt_cpu)
