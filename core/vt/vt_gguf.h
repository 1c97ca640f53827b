/* vt_gguf.h - reading GGUF model files (v2 and v3, little-endian).
 *
 * vt_gguf_open maps a file read-only and validates all of it before it
 * returns: the header, every metadata key/value (KV), every tensor info and
 * the place of every tensor's data. A malformed or hostile file gets
 * VT_E_BAD_FILE and a message naming the file, the byte offset and the field:
 *
 *   bad GGUF file 'x.gguf' at offset 24: kv[3] key length 18446744073709551615
 *   exceeds the file (size 1024)
 *
 * After a successful open nothing is read unchecked: the getters and the
 * tensor table only hand out what was validated.
 *
 * Ownership: the handle owns everything it hands out. Keys and tensor names
 * are NUL-terminated copies; string values (vt_gguf_str) and tensor data
 * point into the mapping (or the caller's buffer for vt_gguf_open_memory).
 * All of them live until vt_gguf_close. An open handle is read-only: any
 * number of threads may query it at once.
 *
 * Shapes: GGUF stores ne[] innermost FIRST; vt shapes are row-major,
 * innermost LAST. vt_gguf_tensor carries both (ne as in the file, shape
 * reversed). */
#ifndef VT_GGUF_H
#define VT_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vt/vt_dtype.h>
#include <vt/vt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most dims a GGUF tensor has (ggml's GGML_MAX_DIMS; equals VT_MAX_DIMS). */
#define VT_GGUF_MAX_DIMS 4

/* Longest tensor name in bytes (ggml's GGML_MAX_NAME is 64 with the NUL). */
#define VT_GGUF_MAX_NAME 63

/* Data alignment when the file has no general.alignment. */
#define VT_GGUF_DEFAULT_ALIGNMENT 32u

/* Largest general.alignment accepted (1 MiB): real files use 32 or a page;
 * anything larger only inflates padding, so it is refused as hostile. */
#define VT_GGUF_MAX_ALIGNMENT (1u << 20)

/* The key that sets the data alignment (a u32, a power of two). */
#define VT_GGUF_KEY_ALIGNMENT "general.alignment"

/* KV value types, with GGUF's numbers. */
typedef enum vt_gguf_type {
    VT_GGUF_U8 = 0,
    VT_GGUF_I8 = 1,
    VT_GGUF_U16 = 2,
    VT_GGUF_I16 = 3,
    VT_GGUF_U32 = 4,
    VT_GGUF_I32 = 5,
    VT_GGUF_F32 = 6,
    VT_GGUF_BOOL = 7,
    VT_GGUF_STRING = 8,
    VT_GGUF_ARRAY = 9,
    VT_GGUF_U64 = 10,
    VT_GGUF_I64 = 11,
    VT_GGUF_F64 = 12,
    VT_GGUF_TYPE_COUNT = 13 /* one past the largest; not a type */
} vt_gguf_type;

/* A byte string from the file: NOT NUL-terminated, may hold any byte.
 * Points into the mapping; lives until vt_gguf_close. */
typedef struct vt_gguf_str {
    const char *data;
    uint64_t len;
} vt_gguf_str;

/* One scalar value (a KV's value or one element of an array). */
typedef struct vt_gguf_value {
    vt_gguf_type type; /* never VT_GGUF_ARRAY */
    union {
        uint64_t u;      /* u8, u16, u32, u64 */
        int64_t i;       /* i8, i16, i32, i64 */
        double f;        /* f32 (widened exactly), f64 */
        bool b;          /* bool (any non-zero byte is true) */
        vt_gguf_str str; /* string */
    } as;
} vt_gguf_value;

/* One metadata KV as validated at open. Owned by the handle. New fields are
 * only ever appended; struct_size says how many this library fills. */
typedef struct vt_gguf_kv {
    uint32_t struct_size;   /* sizeof(vt_gguf_kv) of the library */
    size_t index;           /* position in the file, 0-based */
    const char *key;        /* NUL-terminated (keys with a NUL byte are refused) */
    uint64_t key_len;       /* strlen(key) */
    vt_gguf_type type;      /* VT_GGUF_ARRAY for arrays */
    vt_gguf_type elem_type; /* arrays: the element type; scalars: type */
    uint64_t count;         /* arrays: number of elements; scalars: 1 */
    uint64_t offset;        /* file offset of the record (its key length) */
    uint64_t value_offset;  /* file offset of the value (arrays: element 0) */
} vt_gguf_kv;

/* One tensor info, validated at open: its data lies inside the file,
 * aligned, overlapping no other tensor's. Owned by the handle. New fields
 * are only ever appended; struct_size says how many this library fills. */
typedef struct vt_gguf_tensor {
    uint32_t struct_size;            /* sizeof(vt_gguf_tensor) of the library */
    size_t index;                    /* position in the file, 0-based */
    const char *name;                /* NUL-terminated, 1..VT_GGUF_MAX_NAME bytes */
    uint32_t name_len;               /* strlen(name) */
    vt_dtype type;                   /* ggml type id; always in the type table */
    uint32_t n_dims;                 /* dims as stored, 0..VT_GGUF_MAX_DIMS */
    int64_t ne[VT_GGUF_MAX_DIMS];    /* GGUF order, innermost FIRST; 1 past n_dims */
    int64_t shape[VT_GGUF_MAX_DIMS]; /* vt order, innermost LAST: shape[i] = ne[n_dims-1-i]; 1 past n_dims */
    int64_t n_elements;              /* product of ne (1 when n_dims is 0) */
    uint64_t n_bytes;                /* bytes of its data in the file, without padding */
    uint64_t offset;                 /* in the data section, as stored */
    uint64_t file_offset;            /* absolute: data offset + offset */
    const void *data;                /* its bytes in the mapping; NULL when n_bytes is 0 */
    uint64_t info_offset;            /* file offset of its tensor-info record */
} vt_gguf_tensor;

typedef struct vt_gguf vt_gguf;

/* Map path read-only and validate it. *out is owned by the caller
 * (vt_gguf_close). VT_E_NOT_FOUND: no such file; VT_E_IO: it cannot be
 * opened, is not a regular file or cannot be mapped; VT_E_BAD_FILE: it is
 * not a valid GGUF v2/v3 little-endian file (the message names the offset
 * and the field). The file must not be truncated while open. */
VT_WARN_UNUSED vt_status vt_gguf_open(const char *path, vt_gguf **out);

/* Validate a GGUF image already in memory, without copying it: the caller
 * keeps data alive and unchanged until vt_gguf_close. name (may be NULL:
 * "<memory>") is used in messages and copied. */
VT_WARN_UNUSED vt_status vt_gguf_open_memory(const void *data, size_t size, const char *name, vt_gguf **out);

/* Unmap and free everything the handle handed out. NULL is ignored. */
void vt_gguf_close(vt_gguf *g);

/* The name given at open (the path, or the memory name). */
const char *vt_gguf_name(const vt_gguf *g);

/* GGUF version of the file: 2 or 3. */
uint32_t vt_gguf_version(const vt_gguf *g);

/* Data alignment: general.alignment, or VT_GGUF_DEFAULT_ALIGNMENT. */
uint32_t vt_gguf_alignment(const vt_gguf *g);

/* File offset of the data section (aligned end of the tensor infos). */
uint64_t vt_gguf_data_offset(const vt_gguf *g);

/* Sum over tensors of their byte sizes, each padded to the alignment. */
uint64_t vt_gguf_data_size(const vt_gguf *g);

/* Size of the file (or memory image) in bytes. */
uint64_t vt_gguf_file_size(const vt_gguf *g);

/* First byte of the whole mapping (or memory image). */
const void *vt_gguf_bytes(const vt_gguf *g);

/* Number of metadata KVs. */
size_t vt_gguf_kv_count(const vt_gguf *g);

/* KV i in file order, or NULL when i is out of range. */
const vt_gguf_kv *vt_gguf_kv_at(const vt_gguf *g, size_t i);

/* The KV with this key: VT_E_NOT_FOUND when absent (*out = NULL). */
VT_WARN_UNUSED vt_status vt_gguf_find_kv(const vt_gguf *g, const char *key, const vt_gguf_kv **out);

/* Value of KV kv_index: the scalar (elem must be 0) or array element elem.
 * VT_E_INVALID_ARG when either index is out of range. O(1). */
VT_WARN_UNUSED vt_status vt_gguf_kv_value(const vt_gguf *g, size_t kv_index, uint64_t elem, vt_gguf_value *out);

/* Typed getters by key. VT_E_NOT_FOUND when the key is absent;
 * VT_E_BAD_FILE (naming the key, its offset and both types) when its type
 * does not convert without loss: u32 takes u8/u16/u32; u64 any unsigned;
 * i64 any signed, u8/u16/u32; f32 f32; f64 f32/f64; bool and string exact. */
VT_WARN_UNUSED vt_status vt_gguf_get_u32(const vt_gguf *g, const char *key, uint32_t *out);
VT_WARN_UNUSED vt_status vt_gguf_get_u64(const vt_gguf *g, const char *key, uint64_t *out);
VT_WARN_UNUSED vt_status vt_gguf_get_i64(const vt_gguf *g, const char *key, int64_t *out);
VT_WARN_UNUSED vt_status vt_gguf_get_f32(const vt_gguf *g, const char *key, float *out);
VT_WARN_UNUSED vt_status vt_gguf_get_f64(const vt_gguf *g, const char *key, double *out);
VT_WARN_UNUSED vt_status vt_gguf_get_bool(const vt_gguf *g, const char *key, bool *out);
VT_WARN_UNUSED vt_status vt_gguf_get_string(const vt_gguf *g, const char *key, vt_gguf_str *out);

/* The array KV with this key whose elements are elem_type (any element type
 * when elem_type is VT_GGUF_ARRAY). Read elements with vt_gguf_kv_value.
 * VT_E_NOT_FOUND when absent, VT_E_BAD_FILE when not such an array. */
VT_WARN_UNUSED vt_status vt_gguf_get_array(const vt_gguf *g, const char *key, vt_gguf_type elem_type,
                                           const vt_gguf_kv **out);

/* Number of tensors. */
size_t vt_gguf_tensor_count(const vt_gguf *g);

/* Tensor i in file order, or NULL when i is out of range. */
const vt_gguf_tensor *vt_gguf_tensor_at(const vt_gguf *g, size_t i);

/* The tensor with this name: VT_E_NOT_FOUND when absent (*out = NULL). */
VT_WARN_UNUSED vt_status vt_gguf_find_tensor(const vt_gguf *g, const char *name, const vt_gguf_tensor **out);

/* GGUF's name of a value type: "u8" ... "f64", "string", "array";
 * "unknown" for anything else. Static. */
const char *vt_gguf_type_name(int type);

/* Render len bytes from a file as one line of safe text into buf (always
 * NUL-terminated when size > 0): printable ASCII and valid UTF-8 from U+00A0
 * as they are, '\\' and '"' backslashed, every other byte as \xNN. Stops
 * early (ending in "...") when buf is too small. Returns the number of input
 * bytes rendered. */
uint64_t vt_gguf_escape(const char *s, uint64_t len, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* VT_GGUF_H */
