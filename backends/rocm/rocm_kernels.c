/* rocm_kernels.c - the rocm backend's kernel table, the family tables
 * (rocm_kernels_<family>.c) joined in the catalogue's order by the one
 * helper every such backend uses (VT_KERNEL_TABLE_FROM_FAMILIES,
 * vt_backend.h). Static: `vtctl ops rocm` lists it without a device. */
#include "config.h"

#include "rocm_common.h"

/* Called once, from vt_plugin_entry's pthread_once (rocm_plugin.c). */
VT_KERNEL_TABLE_FROM_FAMILIES(vt_rocm_kernel_table, vt_rocm)
