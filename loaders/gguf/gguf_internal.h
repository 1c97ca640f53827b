/* gguf_internal.h - the GGUF handle and the on-disk format shared by the
 * parser, the accessors and the writer of loaders/gguf. Not installed. */
#ifndef VT_GGUF_INTERNAL_H
#define VT_GGUF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vt/vt_dtype.h"
#include "vt/vt_gguf.h"
#include "vt/vt_gguf_writer.h"
#include "vt/vt_status.h"

/* "GGUF" as the first four bytes. */
#define GGUF_MAGIC_0 'G'
#define GGUF_MAGIC_1 'G'
#define GGUF_MAGIC_2 'U'
#define GGUF_MAGIC_3 'F'

/* Header: magic, u32 version, u64 tensor count, u64 KV count. */
#define GGUF_HEADER_BYTES 24u

/* Smallest possible records, used to bound counts by the bytes left:
 * a KV is a u64 key length, a key of at least 1 byte, a u32 type and a
 * value of at least 1 byte; a tensor info is a u64 name length, a name of
 * at least 1 byte, u32 n_dims, u32 type and u64 offset. */
#define GGUF_MIN_KV_BYTES     (8u + 1u + 4u + 1u)
#define GGUF_MIN_TENSOR_BYTES (8u + 1u + 4u + 4u + 8u)

/* One KV as parsed; pub is what vt_gguf_kv_at hands out. */
typedef struct gguf_kv_entry {
    vt_gguf_kv pub;
    const uint8_t *key_bytes; /* the key in the mapping (pub.key is the copy) */
    const uint8_t *value;     /* scalar value, or array element 0, in the mapping */
    size_t str_first;         /* string arrays: first slot in vt_gguf.str_offsets */
} gguf_kv_entry;

struct vt_gguf {
    char *name;          /* for messages */
    const uint8_t *base; /* the file's bytes */
    uint64_t size;
    void *map; /* mmap'ed by vt_gguf_open, or NULL (memory image) */
    size_t map_size;
    int fd; /* the open file (staging reads it with pread), or -1 */
    uint32_t version;
    uint32_t alignment;
    uint64_t data_offset;
    uint64_t data_size;
    gguf_kv_entry *kvs;
    size_t n_kv;
    vt_gguf_tensor *tensors;
    size_t n_tensors;
    uint64_t *str_offsets; /* file offsets of every string-array element */
    size_t n_str_offsets;
    char *names;                           /* keys and tensor names, NUL-terminated */
    const gguf_kv_entry **kv_by_key;       /* sorted by key */
    const vt_gguf_tensor **tensor_by_name; /* sorted by name */
};

/* Parse and validate g->base[0..g->size) into g (g->name set). On failure
 * the thread's error is set and g holds partial allocations that
 * gguf_release frees. */
vt_status gguf_parse(vt_gguf *g);

/* Free what gguf_parse allocated (not the mapping, not g). */
void gguf_release(vt_gguf *g);

/* Fixed byte size of a scalar value type; 0 for string, array and unknown. */
uint32_t gguf_type_size(int type);

/* Little-endian loads from unaligned bytes. */
static inline uint16_t gguf_load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t gguf_load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t gguf_load_u64(const uint8_t *p)
{
    return (uint64_t)gguf_load_u32(p) | (uint64_t)gguf_load_u32(p + 4) << 32;
}

/* Little-endian stores. */
static inline void gguf_store_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void gguf_store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void gguf_store_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Why gguf_tensor_size refused a shape. */
typedef enum gguf_size_result {
    GGUF_SIZE_OK = 0,
    GGUF_SIZE_BAD_TYPE,          /* type not in the type table, or n_dims > 4 */
    GGUF_SIZE_NEGATIVE,          /* a dim is negative */
    GGUF_SIZE_ELEMENTS_OVERFLOW, /* the element count overflows int64 */
    GGUF_SIZE_NOT_BLOCKS,        /* ne[0] is not a multiple of the block size */
    GGUF_SIZE_BYTES_OVERFLOW     /* (ne0/blck)*type_size*ne1*ne2*ne3 overflows 64 bits */
} gguf_size_result;

/* Element count and byte size of a tensor (ne in GGUF order, n_dims dims).
 * Overflow checks count zero dims as 1, so a shape that would overflow is
 * refused whatever its zero dims (and vt_dtype_tensor_bytes agrees with
 * every accepted shape). Outputs are set only on GGUF_SIZE_OK. */
gguf_size_result gguf_tensor_size(int type, uint32_t n_dims, const int64_t *ne, int64_t *n_elements, uint64_t *n_bytes);

/* Read n bytes of tensor t's data from byte off of its data into dst:
 * pread from the file where g has one (a file that shrank since it was
 * mapped gives VT_E_BAD_FILE naming the tensor, never SIGBUS), else a copy
 * from the memory image. */
vt_status gguf_read_tensor(const vt_gguf *g, const vt_gguf_tensor *t, uint64_t off, void *dst, size_t n);

/* Decode one scalar of a fixed-size type (not string) at p. */
void gguf_decode_scalar(int type, const uint8_t *p, vt_gguf_value *out);

#endif /* VT_GGUF_INTERNAL_H */
