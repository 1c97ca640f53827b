/* op_catalog.c - the op catalogue (SPEC 7): the list of block formats, the
 * op families (core/ops/, where each op's entry, operand rules and output
 * shapes are) and the lookups over them: by id, by name, in id order.
 * Backends' kernel tables are checked against it; `vtctl ops` walks it. */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ops/op_family.h"

#define Q_ID(id, f) id,
const vt_dtype vt_q_formats[] = {VT_Q_FORMATS(Q_ID)};
#undef Q_ID
const uint32_t vt_n_q_formats = sizeof vt_q_formats / sizeof vt_q_formats[0];

vt_sig vt_op_sig_f32[1];

/* The families (core/ops/), each with its ops' entries, rules and shapes. */
#define FAMILY(unused, family) &vt_ops_##family,
static const vt_op_family *const families[] = {VT_OP_FAMILIES(FAMILY, )};
#undef FAMILY

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const vt_op_def *by_id[VT_OP_ID_LIMIT];
static const vt_op_info *in_order[VT_OP_ID_LIMIT]; /* the catalogue in id order */
static uint32_t n_ops;

static void build_index(void)
{
    vt_dtype f32 = VT_F32;
    vt_op_sig_f32[0] = vt_sig_make(1, &f32);
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (families[f]->build)
            families[f]->build();
        for (uint32_t i = 0; i < families[f]->n_ops; i++)
            by_id[families[f]->ops[i].info.op] = &families[f]->ops[i];
    }
    for (uint32_t op = 0; op < VT_OP_ID_LIMIT; op++)
        if (by_id[op])
            in_order[n_ops++] = &by_id[op]->info;
}

static void ensure_built(void)
{
    pthread_once(&once, build_index);
}

const vt_op_def *vt_op_def_get(uint32_t op)
{
    if (op == 0 || op >= VT_OP_ID_LIMIT)
        return NULL;
    ensure_built();
    return by_id[op];
}

const char *vt_op_family_name(vt_op op)
{
    ensure_built();
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (uint32_t i = 0; i < families[f]->n_ops; i++)
            if (families[f]->ops[i].info.op == op)
                return families[f]->name;
    return NULL;
}

const vt_op_info *vt_op_get_info(vt_op op)
{
    const vt_op_def *d = vt_op_def_get(op);
    return d ? &d->info : NULL;
}

uint32_t vt_op_catalog_size(void)
{
    ensure_built();
    return n_ops;
}

const vt_op_info *vt_op_catalog_entry(uint32_t i)
{
    ensure_built();
    return i < n_ops ? in_order[i] : NULL;
}

bool vt_op_sig_in_catalog(vt_op op, vt_sig sig)
{
    const vt_op_info *info = vt_op_get_info(op);
    if (!info)
        return false;
    for (uint32_t i = 0; i < info->n_sigs; i++)
        if (vt_sig_equal(info->sigs[i], sig))
            return true;
    return false;
}

const char *vt_op_name(vt_op op)
{
    const vt_op_info *info = vt_op_get_info(op);
    return info ? info->name : NULL;
}

vt_op vt_op_from_name(const char *name)
{
    if (!name)
        return VT_OP_NONE;
    ensure_built();
    for (uint32_t i = 0; i < n_ops; i++) {
        const char *n = in_order[i]->name;
        size_t j = 0;
        while (n[j] && name[j] && tolower((unsigned char)n[j]) == tolower((unsigned char)name[j]))
            j++;
        if (!n[j] && !name[j])
            return in_order[i]->op;
    }
    return VT_OP_NONE;
}

vt_sig vt_sig_make(uint32_t n, const vt_dtype *dtypes)
{
    vt_sig s;
    memset(&s, 0, sizeof s);
    if (n > VT_SIG_MAX)
        n = VT_SIG_MAX;
    s.n = (uint8_t)n;
    for (uint32_t i = 0; i < n; i++)
        s.dtype[i] = dtypes[i];
    return s;
}

bool vt_sig_equal(vt_sig a, vt_sig b)
{
    if (a.n != b.n)
        return false;
    for (uint32_t i = 0; i < a.n && i < VT_SIG_MAX; i++)
        if (a.dtype[i] != b.dtype[i])
            return false;
    return true;
}

char *vt_sig_format(vt_sig sig, char *buf, size_t size)
{
    size_t used = 0;
    if (!buf || size == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf + used, size - used, "(");
    for (uint32_t i = 0; i < sig.n && i < VT_SIG_MAX && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", vt_dtype_name(sig.dtype[i]));
    if (used < size)
        snprintf(buf + used, size - used, ")");
    return buf;
}

const vt_kernel *vt_kernel_find(const vt_kernel *table, uint32_t n, vt_op op, vt_sig sig)
{
    for (uint32_t i = 0; i < n; i++)
        if (table[i].op == op && vt_sig_equal(table[i].sig, sig))
            return &table[i];
    return NULL;
}
