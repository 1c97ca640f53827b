/* vt_status.h - status codes returned by every vt call, and the error text.
 *
 * Every public function that can fail returns a vt_status. On failure the
 * calling thread's last-error text (vt_last_error) names what failed and
 * where: the op and its id, the device, the file offset, the plugin path. */
#ifndef VT_STATUS_H
#define VT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a function whose returned status must be looked at: ignoring it
 * is a compiler warning (an error under --enable-werror). A (void) cast
 * does not silence GCC; handle the status, or say in code why it cannot
 * matter. */
#if defined(__GNUC__) || defined(__clang__)
#define VT_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define VT_WARN_UNUSED
#endif

/* Stable numbers: they appear in logs and JSON output. */
typedef enum vt_status {
    VT_OK = 0,
    VT_E_INVALID_ARG = 1,  /* the caller passed something malformed */
    VT_E_NO_MEMORY = 2,    /* a host allocation failed */
    VT_E_NOT_FOUND = 3,    /* no such backend, device, op, key or file */
    VT_E_PLUGIN = 4,       /* a plugin could not be loaded or misbehaved */
    VT_E_DEVICE = 5,       /* a device runtime call failed */
    VT_E_DEVICE_OOM = 6,   /* the device refused an allocation */
    VT_E_OP_MISSING = 7,   /* no tier can run this op on this device */
    VT_E_DOES_NOT_FIT = 8, /* the weights (and run state) exceed the budget */
    VT_E_BAD_FILE = 9,     /* a model file is malformed or hostile */
    VT_E_SHAPE = 10,       /* operand shapes or dtypes do not match the op */
    VT_E_IO = 11,          /* a read, write or mmap of a file failed */
    VT_E_UNSUPPORTED = 12, /* valid, but this build or device cannot do it */
    VT_E_DEVICE_LOST = 13, /* the device stopped answering */
    VT_E_NOT_READY = 14    /* queued work has not finished yet (vt_event_query); not a failure */
} vt_status;

/* Symbolic name of a status, e.g. "VT_E_OP_MISSING"; never NULL. */
const char *vt_status_name(vt_status status);

/* Text of the last failure on the calling thread; "" if none. The buffer is
 * thread-local and valid until the thread's next failing vt call. */
const char *vt_last_error(void);

/* Forget the calling thread's last error. */
void vt_clear_error(void);

#if defined(__GNUC__)
#define VT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define VT_PRINTF(a, b)
#endif

/* Record a failure as the calling thread's last error (printf-style text
 * naming what and where) and return status: for libraries built on libvt,
 * such as its GGUF loader, whose failures read like the core's. */
vt_status vt_set_error(vt_status status, const char *fmt, ...) VT_PRINTF(2, 3);

#ifdef __cplusplus
}
#endif
#endif /* VT_STATUS_H */
