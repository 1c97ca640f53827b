/* gguf_types.c - GGUF value types: names, fixed sizes, scalar decoding. */
#include "config.h"

#include <string.h>

#include "gguf_internal.h"

static const struct {
    const char *name;
    uint32_t size; /* 0: variable (string, array) */
} types[VT_GGUF_TYPE_COUNT] = {
    [VT_GGUF_U8] = {"u8", 1},       [VT_GGUF_I8] = {"i8", 1},     [VT_GGUF_U16] = {"u16", 2},
    [VT_GGUF_I16] = {"i16", 2},     [VT_GGUF_U32] = {"u32", 4},   [VT_GGUF_I32] = {"i32", 4},
    [VT_GGUF_F32] = {"f32", 4},     [VT_GGUF_BOOL] = {"bool", 1}, [VT_GGUF_STRING] = {"string", 0},
    [VT_GGUF_ARRAY] = {"array", 0}, [VT_GGUF_U64] = {"u64", 8},   [VT_GGUF_I64] = {"i64", 8},
    [VT_GGUF_F64] = {"f64", 8},
};

const char *vt_gguf_type_name(int type)
{
    if (type < 0 || type >= VT_GGUF_TYPE_COUNT)
        return "unknown";
    return types[type].name;
}

uint32_t gguf_type_size(int type)
{
    if (type < 0 || type >= VT_GGUF_TYPE_COUNT)
        return 0;
    return types[type].size;
}

void gguf_decode_scalar(int type, const uint8_t *p, vt_gguf_value *out)
{
    memset(out, 0, sizeof *out);
    out->type = (vt_gguf_type)type;
    switch (type) {
    case VT_GGUF_U8: out->as.u = p[0]; break;
    case VT_GGUF_I8: out->as.i = (int8_t)p[0]; break;
    case VT_GGUF_U16: out->as.u = gguf_load_u16(p); break;
    case VT_GGUF_I16: out->as.i = (int16_t)gguf_load_u16(p); break;
    case VT_GGUF_U32: out->as.u = gguf_load_u32(p); break;
    case VT_GGUF_I32: out->as.i = (int32_t)gguf_load_u32(p); break;
    case VT_GGUF_U64: out->as.u = gguf_load_u64(p); break;
    case VT_GGUF_I64: out->as.i = (int64_t)gguf_load_u64(p); break;
    case VT_GGUF_BOOL: out->as.b = p[0] != 0; break;
    case VT_GGUF_F32: {
        uint32_t bits = gguf_load_u32(p);
        float f;
        memcpy(&f, &bits, sizeof f);
        out->as.f = f;
        break;
    }
    case VT_GGUF_F64: {
        uint64_t bits = gguf_load_u64(p);
        memcpy(&out->as.f, &bits, sizeof out->as.f);
        break;
    }
    default: break;
    }
}
