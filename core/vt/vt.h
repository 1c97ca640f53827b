/* vt.h - the public interface of libvt: include this one header.
 *
 *   #include <vt/vt.h>      pkg-config --cflags --libs vt
 *
 * vt_status.h    status codes and the last-error text
 * vt_dtype.h     element types (ggml ids) and the type table
 * vt_gguf.h      reading GGUF model files (validated, mmap'ed)
 * vt_gguf_writer.h  writing GGUF files
 * vt_op.h        the op catalogue and kernel signatures
 * vt_params.h    parameter structs of the ops
 * vt_caps.h      device capabilities and staging decisions
 * vt_backend.h   the plugin contract (for backend authors)
 * vt_registry.h  loading backends, listing devices
 * vt_fit.h       residency of weights and the device-fit refusal
 * vt_resolve.h   which tier runs an op (native, CPU tier, refused)
 * vt_tensor.h    tensors on devices and running ops
 * vt_queue.h     queues, events, async copies and graphs
 * vt_utf8.h      the UTF-8 validator */
#ifndef VT_H
#define VT_H

#include <vt/vt_backend.h>
#include <vt/vt_caps.h>
#include <vt/vt_dtype.h>
#include <vt/vt_fit.h>
#include <vt/vt_gguf.h>
#include <vt/vt_gguf_writer.h>
#include <vt/vt_load.h>
#include <vt/vt_number.h>
#include <vt/vt_op.h>
#include <vt/vt_params.h>
#include <vt/vt_queue.h>
#include <vt/vt_registry.h>
#include <vt/vt_resolve.h>
#include <vt/vt_status.h>
#include <vt/vt_tensor.h>
#include <vt/vt_utf8.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library version string, e.g. "0.1.0". */
const char *vt_version(void);

/* Human-readable size, "1.5 GiB" or "512 B", into buf; returns buf. */
const char *vt_format_bytes(uint64_t bytes, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* VT_H */
