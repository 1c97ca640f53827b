/* cmd_op.c - `vtctl op describe OP` (the inputs, outputs, signatures and
 * params of an op, from vt_op_info) and `vtctl op run OP --backend
 * B[:DEV] --in NAME=SOURCE ... [--param KEY=VALUE ...] [--in-dtype
 * NAME=DTYPE ...] [--out-dtype DTYPE] --out DIR`: one op on arrays read
 * from files (input_source.h), every output written as DIR/NAME.npy.
 * INOUT outputs (states, caches) are given with --in too and come back
 * updated. Params are parsed by field name and type from vt_op_info; every
 * field must be given. --out-dtype picks the dtype the catalogue leaves
 * free (Copy's dst, GetRows' dst, Dequantize's dst; default f32). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input_source.h"
#include "npy.h"
#include "op_shapes.h"
#include "vtctl.h"

static const char *param_type_name(uint32_t t)
{
    return t == VT_PARAM_F32 ? "f32" : t == VT_PARAM_I32 ? "i32" : "u64";
}

/* An operand list (inputs or outputs) as rows; flag/note mark the optional
 * or in-out ones. */
static void describe_operands(rec_writer *r, const char *key, const vt_operand_info *ops, uint32_t n,
                              const char *flag_key, uint32_t flag, const char *note)
{
    rec_array_begin(r, key);
    for (uint32_t i = 0; i < n; i++) {
        bool on = (ops[i].flags & flag) != 0;
        rec_row_begin(r, NULL);
        rec_str_as(r, "name", "", ops[i].name, "%-12s ", ops[i].name);
        rec_str_as(r, "doc", "", ops[i].doc, "%s", ops[i].doc);
        rec_bool_as(r, flag_key, "", on, "%s", on ? note : "");
        rec_row_end(r);
    }
    rec_array_end(r);
}

/* `vtctl op describe`: the catalogue entry as one record. */
static void describe(rec_writer *r, const vt_op_info *info)
{
    rec_object_begin(r, NULL, NULL);
    rec_text_layout(r, 0, 0);
    rec_uint_as(r, "id", "", info->op, "%s (%u): %s", info->name, info->op, info->summary);
    rec_str(r, "name", NULL, info->name);
    rec_str(r, "summary", NULL, info->summary);
    rec_text(r, "inputs (in call order):\n");
    rec_text_layout(r, 2, 0);
    describe_operands(r, "inputs", info->in, info->n_in, "optional", VT_OPERAND_OPTIONAL, "  (optional)");
    rec_text(r, "outputs (in call order):\n");
    describe_operands(r, "outputs", info->out, info->n_out, "inout", VT_OPERAND_INOUT,
                      "  (in-out: read and updated in place; give it with --in)");
    rec_text_layout(r, 0, 0);
    bool free_dtype = op_shapes_has_free_dtype(info->op);
    rec_bool_as(r, "free_output_dtype", free_dtype ? "" : NULL, free_dtype, "output dtype: --out-dtype (default f32)");
    rec_str_as(r, "signature_operands", "", info->sig_operands, "signature operands: %s", info->sig_operands);
    char sigs[256][96], text[16384];
    const char *names[256];
    size_t used = 0, n = 0;
    for (uint32_t i = 0; i < info->n_sigs && n < 256; i++, n++) {
        names[n] = vt_sig_format(info->sigs[i], sigs[n], sizeof sigs[n]);
        if (used < sizeof text)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", i % 6 ? " " : "\n  ", names[n]);
    }
    rec_str_list(r, "signatures", NULL, names, n, "");
    rec_text(r, "signatures:%s\n", n ? text : "");
    rec_text(r, "params:%s\n", info->n_params ? "" : " none");
    rec_text_layout(r, 2, 0);
    rec_array_begin(r, "params");
    for (uint32_t i = 0; i < info->n_params; i++) {
        const char *type = param_type_name(info->params[i].type);
        rec_row_begin(r, NULL);
        rec_str_as(r, "name", "", info->params[i].name, "%-12s ", info->params[i].name);
        rec_str_as(r, "type", "", type, "%-4s ", type);
        rec_str_as(r, "doc", "", info->params[i].doc, "%s", info->params[i].doc);
        rec_row_end(r);
    }
    rec_array_end(r);
    rec_object_end(r, false);
}

static int cmd_describe(int argc, char **argv)
{
    bool json = false;
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (argv[i][0] == '-')
            return vtctl_usage_error("op describe", "unknown option '%s'", argv[i]);
        else if (name)
            return vtctl_usage_error("op describe", "name one op");
        else
            name = argv[i];
    }
    if (!name)
        return vtctl_usage_error("op describe", "name an op (vtctl ops cpu lists them)");
    vt_op op = vt_op_from_name(name);
    if (op == VT_OP_NONE)
        return vtctl_usage_error("op describe", "no op named '%s' in the catalogue", name);
    json_writer w;
    rec_writer r;
    rec_start(&r, &w, json, 0, 0);
    describe(&r, vt_op_get_info(op));
    rec_finish(&r);
    return VTCTL_EXIT_OK;
}

/* ---- op run ---- */

/* Split "NAME=VALUE" (VALUE must be non-empty). */
static bool split_kv(const char *s, char *name, size_t size, const char **value)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1] || (size_t)(eq - s) >= size)
        return false;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = '\0';
    *value = eq + 1;
    return true;
}

/* Operand slot of a name: inputs 0..n_in-1, INOUT outputs as n_in + j. */
static int operand_slot(const vt_op_info *info, const char *name)
{
    for (uint32_t i = 0; i < info->n_in; i++)
        if (!strcmp(info->in[i].name, name))
            return (int)i;
    for (uint32_t j = 0; j < info->n_out; j++)
        if ((info->out[j].flags & VT_OPERAND_INOUT) && !strcmp(info->out[j].name, name))
            return (int)(info->n_in + j);
    return -1;
}

static void list_names(const vt_op_info *info, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < info->n_in && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", info->in[i].name);
    for (uint32_t j = 0; j < info->n_out && used < size; j++)
        if (info->out[j].flags & VT_OPERAND_INOUT)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", info->out[j].name);
}

/* Write why and return false. */
static bool param_error(char *why, size_t why_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool param_error(char *why, size_t why_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return false;
}

/* Parse one --param KEY=VALUE into the params buffer; false with why. */
static bool parse_param(const vt_op_info *info, const char *kv, unsigned char *buf, bool *given, char *why,
                        size_t why_size)
{
    char key[64];
    const char *val;
    if (!split_kv(kv, key, sizeof key, &val))
        return param_error(why, why_size, "--param wants KEY=VALUE, got '%s'", kv);
    for (uint32_t i = 0; i < info->n_params; i++) {
        const vt_param_info *p = &info->params[i];
        if (strcmp(p->name, key) != 0)
            continue;
        char *end = NULL;
        errno = 0;
        if (p->type == VT_PARAM_F32) {
            float v = strtof(val, &end);
            if (errno || *end || end == val || isspace((unsigned char)val[0]) || !isfinite(v))
                return param_error(why, why_size, "%s is f32, got '%s'", key, val);
            memcpy(buf + p->offset, &v, sizeof v);
        } else if (p->type == VT_PARAM_I32) {
            int64_t v = 0;
            if (!vt_parse_i64(val, INT32_MIN, INT32_MAX, &v))
                return param_error(why, why_size, "%s is i32, got '%s'", key, val);
            int32_t x = (int32_t)v;
            memcpy(buf + p->offset, &x, sizeof x);
        } else {
            uint64_t v = 0;
            if (!vt_parse_u64(val, &v))
                return param_error(why, why_size, "%s is u64, got '%s'", key, val);
            uint64_t x = v;
            memcpy(buf + p->offset, &x, sizeof x);
        }
        given[i] = true;
        return true;
    }
    char names[256] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < info->n_params && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", info->params[i].name);
    return param_error(why, why_size, "%s has no param '%s' (params: %s)", info->name, key,
                       info->n_params ? names : "none");
}

static bool is_float_dtype(uint32_t t)
{
    return t == VT_F32 || t == VT_F16 || t == VT_BF16 || t == VT_F64;
}

static bool is_int_dtype(uint32_t t)
{
    return t == VT_I8 || t == VT_I16 || t == VT_I32 || t == VT_I64;
}

/* Convert (floats, integers) or reinterpret (raw bytes as a block format)
 * array a to dtype t. */
static vt_status convert_input(const char *name, host_array *a, vt_dtype t, char *why, size_t why_size)
{
    if (a->dtype == t)
        return VT_OK;
    const vt_dtype_info *ti = vt_dtype_get(t);
    if (a->dtype == NPY_RAW_BYTES) {
        if (!ti || !ti->quantized)
            return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: raw bytes ('|u1') can be named a block format only",
                          name);
        int64_t last = a->ndim ? a->shape[a->ndim - 1] : 1;
        if (last % ti->block_bytes)
            return vt_why(VT_E_INVALID_ARG, why, why_size,
                          "%s: the last dim (%lld bytes) is not a whole number of %s blocks (%u bytes)", name,
                          (long long)last, ti->name, ti->block_bytes);
        if (!a->ndim)
            a->ndim = 1;
        a->shape[a->ndim - 1] = last / ti->block_bytes * ti->block_elems;
        a->dtype = t;
        return VT_OK;
    }
    bool fl = is_float_dtype(a->dtype) && is_float_dtype(t), in = is_int_dtype(a->dtype) && is_int_dtype(t);
    if (!fl && !in)
        return vt_why(VT_E_INVALID_ARG, why, why_size, "%s: cannot convert %s to %s", name, vt_dtype_name(a->dtype),
                      vt_dtype_name(t));
    host_array b;
    vt_status st = host_array_alloc(&b, t, a->ndim, a->shape);
    if (st != VT_OK)
        return vt_why(st, why, why_size, "%s: no memory to convert", name);
    int64_t n = host_array_elems(a);
    for (int64_t i = 0; i < n; i++) {
        if (fl) {
            double v = host_array_get_f(a, i);
            switch (t) {
            case VT_F16: ((uint16_t *)b.data)[i] = vt_f32_to_f16((float)v); break;
            case VT_BF16: ((uint16_t *)b.data)[i] = vt_f32_to_bf16((float)v); break;
            case VT_F64: ((double *)b.data)[i] = v; break;
            default: ((float *)b.data)[i] = (float)v; break;
            }
        } else {
            int64_t v = host_array_get_i(a, i);
            int64_t lo = t == VT_I8 ? INT8_MIN : t == VT_I16 ? INT16_MIN : t == VT_I32 ? INT32_MIN : INT64_MIN;
            int64_t hi = t == VT_I8 ? INT8_MAX : t == VT_I16 ? INT16_MAX : t == VT_I32 ? INT32_MAX : INT64_MAX;
            if (v < lo || v > hi) {
                host_array_free(&b);
                return vt_why(VT_E_INVALID_ARG, why, why_size, "%s[%lld] = %lld does not fit %s", name, (long long)i,
                              (long long)v, vt_dtype_name(t));
            }
            switch (t) {
            case VT_I8: ((int8_t *)b.data)[i] = (int8_t)v; break;
            case VT_I16: ((int16_t *)b.data)[i] = (int16_t)v; break;
            case VT_I64: ((int64_t *)b.data)[i] = v; break;
            default: ((int32_t *)b.data)[i] = (int32_t)v; break;
            }
        }
    }
    host_array_free(a);
    *a = b;
    return VT_OK;
}

/* Everything `op run` holds; freed by run_free. */
typedef struct run_state {
    const vt_op_info *info;
    host_array arr[VT_MAX_INPUTS + VT_MAX_OUTPUTS]; /* inputs, then outputs */
    vt_tensor *t[VT_MAX_INPUTS + VT_MAX_OUTPUTS];
    unsigned char params[256];
    vt_registry *reg;
} run_state;

static void run_free(run_state *s)
{
    for (size_t i = 0; i < VT_MAX_INPUTS + VT_MAX_OUTPUTS; i++) {
        vt_tensor_destroy(s->t[i]);
        host_array_free(&s->arr[i]);
    }
    if (s->reg)
        vt_registry_close(s->reg);
}

static int fail(run_state *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(run_state *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vtctl op run: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    run_free(s);
    return code;
}

/* Upload, run, read back; the exit code. */
/* DIR/NAME.npy, or its temporary DIR/.NAME.npy.PID.tmp; false when it
 * does not fit buf (never a truncated name). */
static bool out_path(char *buf, size_t size, const char *dir, const char *name, bool temporary)
{
    int n = temporary ? snprintf(buf, size, "%s/.%s.npy.%ld.tmp", dir, name, (long)getpid())
                      : snprintf(buf, size, "%s/%s.npy", dir, name);
    return n > 0 && (size_t)n < size && (size_t)n < PATH_MAX;
}

/* Remove the first n temporary outputs. */
static void unlink_all(char (*paths)[4096], uint32_t n)
{
    for (uint32_t j = 0; j < n; j++)
        unlink(paths[j]);
}

static int execute(run_state *s, const char *dev_spec, const char *dir, bool json)
{
    const vt_op_info *info = s->info;
    if (!vtctl_open(&s->reg))
        return fail(s, VTCTL_EXIT_REFUSED, "no registry");
    vt_device *dev = NULL;
    if (vt_registry_find_device(s->reg, dev_spec, &dev) != VT_OK)
        return fail(s, VTCTL_EXIT_REFUSED, "%s", vt_last_error());
    uint32_t n_in = info->n_in, n_out = info->n_out;
    for (uint32_t j = 0; j < n_out; j++) {
        char p[4096];
        if (!out_path(p, sizeof p, dir, info->out[j].name, true))
            return fail(s, VTCTL_EXIT_USAGE, "--out: the path of %s in '%.60s...' (%zu bytes) is too long",
                        info->out[j].name, dir, strlen(dir));
    }
    /* The catalogue's rules on shapes and params before any allocation (a
     * TopK k of 2e8 on 10 elements is refused, not allocated first). */
    vt_op_args dry;
    memset(&dry, 0, sizeof dry);
    dry.struct_size = sizeof dry;
    dry.op = info->op;
    dry.n_in = n_in;
    dry.n_out = n_out;
    dry.params = info->params_size ? s->params : NULL;
    dry.params_size = info->params_size;
    for (uint32_t i = 0; i < n_in + n_out; i++) {
        host_array *a = &s->arr[i];
        vt_operand *o = i < n_in ? &dry.in[i] : &dry.out[i - n_in];
        if (!a->present)
            continue;
        o->data = a; /* present; never read */
        o->dtype = a->dtype;
        o->ndim = a->ndim;
        memcpy(o->shape, a->shape, sizeof o->shape);
    }
    vt_status dst = vt_op_check_args(&dry);
    if (dst != VT_OK)
        return fail(s, VTCTL_EXIT_REFUSED, "%s: %s", vt_status_name(dst), vt_last_error());
    for (uint32_t i = 0; i < n_in + n_out; i++) {
        host_array *a = &s->arr[i];
        if (!a->present)
            continue;
        if (vt_tensor_create(dev, a->dtype, a->ndim, a->shape, &s->t[i]) != VT_OK)
            return fail(s, VTCTL_EXIT_REFUSED, "%s", vt_last_error());
        size_t n = (size_t)vt_tensor_nbytes(s->t[i]);
        vt_status st;
        if (a->data) {
            st = vt_tensor_write(s->t[i], a->data, n);
        } else { /* poison pure outputs: anything unwritten reads NaN / -1 */
            unsigned char *p = malloc(n ? n : 1);
            if (!p)
                return fail(s, VTCTL_EXIT_REFUSED, "out of memory");
            memset(p, 0xff, n);
            st = vt_tensor_write(s->t[i], p, n);
            free(p);
        }
        if (st != VT_OK)
            return fail(s, VTCTL_EXIT_REFUSED, "%s", vt_last_error());
    }
    const vt_tensor *in[VT_MAX_INPUTS];
    vt_tensor *out[VT_MAX_OUTPUTS];
    for (uint32_t i = 0; i < n_in; i++)
        in[i] = s->t[i];
    for (uint32_t j = 0; j < n_out; j++)
        out[j] = s->t[n_in + j];
    vt_status st =
        vt_op_run(dev, info->op, in, n_in, out, n_out, info->params_size ? s->params : NULL, info->params_size);
    if (st != VT_OK)
        return fail(s, VTCTL_EXIT_REFUSED, "%s: %s", vt_status_name(st), vt_last_error());
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return fail(s, VTCTL_EXIT_REFUSED, "cannot create %s: %s", dir, strerror(errno));
    json_writer w;
    rec_writer r;
    rec_start(&r, &w, json, 0, 0);
    rec_object_begin(&r, NULL, NULL);
    rec_str_as(&r, "op", "", info->name, "%s (%u) ran on %s", info->name, info->op, vt_device_id(dev));
    rec_uint(&r, "id", NULL, info->op);
    rec_str(&r, "device", NULL, vt_device_id(dev));
    /* Every output to a temporary name first, then renamed: a failure
     * leaves no partial .npy file and no mix of new and old outputs. */
    char final[VT_MAX_OUTPUTS][4096], tmp[VT_MAX_OUTPUTS][4096];
    uint32_t written = 0;
    for (uint32_t j = 0; j < n_out; j++) {
        host_array *a = &s->arr[n_in + j];
        host_array got;
        char why[512];
        out_path(final[j], sizeof final[j], dir, info->out[j].name, false);
        out_path(tmp[j], sizeof tmp[j], dir, info->out[j].name, true);
        if (host_array_alloc(&got, a->dtype, a->ndim, a->shape) != VT_OK) {
            unlink_all(tmp, written);
            return fail(s, VTCTL_EXIT_REFUSED, "out of memory");
        }
        if (vt_tensor_read(out[j], got.data, got.nbytes) != VT_OK) {
            host_array_free(&got);
            unlink_all(tmp, written);
            return fail(s, VTCTL_EXIT_REFUSED, "%s", vt_last_error());
        }
        st = npy_write(tmp[j], &got, why, sizeof why);
        host_array_free(&got);
        written++; /* npy_write may leave a partial file: removed below */
        if (st != VT_OK) {
            unlink_all(tmp, written);
            return fail(s, VTCTL_EXIT_REFUSED, "%s", why);
        }
    }
    for (uint32_t j = 0; j < n_out; j++)
        if (rename(tmp[j], final[j]) != 0) {
            int e = errno;
            unlink_all(tmp, n_out);
            return fail(s, VTCTL_EXIT_REFUSED, "cannot rename %s to %s: %s", tmp[j], final[j], strerror(e));
        }
    rec_text_layout(&r, 2, 0);
    rec_array_begin(&r, "outputs");
    for (uint32_t j = 0; j < n_out; j++) {
        host_array *a = &s->arr[n_in + j];
        char shp[96];
        host_array_shape_str(a, shp, sizeof shp);
        const char *dtype = vt_dtype_name(a->dtype);
        rec_row_begin(&r, NULL);
        rec_str_as(&r, "name", "", info->out[j].name, "%-10s ", info->out[j].name);
        rec_text(&r, "%-10s ", shp);
        rec_array_begin(&r, "shape");
        for (uint32_t d = 0; d < a->ndim; d++)
            rec_int(&r, NULL, NULL, a->shape[d]);
        rec_array_end(&r);
        rec_str(&r, "dtype", NULL, dtype);
        rec_str_as(&r, "file_dtype", "", a->dtype == VT_BF16 ? "f32" : dtype, "%-24s ",
                   a->dtype == VT_BF16 ? "f32 (widened from bf16)" : dtype);
        rec_str_as(&r, "file", "", final[j], "-> %s", final[j]);
        rec_row_end(&r);
    }
    rec_array_end(&r);
    rec_object_end(&r, false);
    rec_finish(&r);
    run_free(s);
    return VTCTL_EXIT_OK;
}

static int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {{"backend", required_argument, NULL, 'b'},
                                         {"in", required_argument, NULL, 'i'},
                                         {"param", required_argument, NULL, 'p'},
                                         {"in-dtype", required_argument, NULL, 't'},
                                         {"out-dtype", required_argument, NULL, 'd'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *ins[VT_MAX_INPUTS + VT_MAX_OUTPUTS], *pars[64], *casts[VT_MAX_INPUTS + VT_MAX_OUTPUTS];
    int n_ins = 0, n_pars = 0, n_casts = 0;
    const char *backend = NULL, *dir = NULL, *out_dtype = NULL;
    bool json = false;
    vtctl_opts o = {"op run",
                    "usage: vtctl op run OP --backend B[:DEV] --in NAME=FILE.npy ... [--param KEY=VALUE ...]\n"
                    "                   [--in-dtype NAME=DTYPE ...] [--out-dtype DTYPE] --out DIR [--json]\n",
                    opts, argc, argv};
    int c;
    while ((c = vtctl_option(&o)) > 0) {
        switch (c) {
        case 'b': backend = optarg; break;
        case 'o': dir = optarg; break;
        case 'd': out_dtype = optarg; break;
        case 'j': json = true; break;
        case 'i':
            if (n_ins == VT_MAX_INPUTS + VT_MAX_OUTPUTS)
                return vtctl_usage_error("op run", "too many --in");
            ins[n_ins++] = optarg;
            break;
        case 'p':
            if (n_pars == 64)
                return vtctl_usage_error("op run", "too many --param");
            pars[n_pars++] = optarg;
            break;
        case 't':
            if (n_casts == VT_MAX_INPUTS + VT_MAX_OUTPUTS)
                return vtctl_usage_error("op run", "too many --in-dtype");
            casts[n_casts++] = optarg;
            break;
        }
    }
    if (c < 0)
        return o.exit_code;
    if (argc - optind != 1)
        return vtctl_usage_error("op run", "name one op");
    vt_op op = vt_op_from_name(argv[optind]);
    if (op == VT_OP_NONE)
        return vtctl_usage_error("op run", "no op named '%s' in the catalogue", argv[optind]);
    if (!backend)
        return vtctl_usage_error("op run", "--backend B[:DEV] is required");
    if (!dir)
        return vtctl_usage_error("op run", "--out DIR is required");
    run_state s;
    memset(&s, 0, sizeof s);
    s.info = vt_op_get_info(op);
    const vt_op_info *info = s.info;
    char names[256], why[768], key[64];
    list_names(info, names, sizeof names);

    /* params by name and type; every field must be given */
    bool given[32] = {false};
    for (int i = 0; i < n_pars; i++)
        if (!parse_param(info, pars[i], s.params, given, why, sizeof why))
            return vtctl_usage_error("op run", "%s", why);
    for (uint32_t i = 0; i < info->n_params; i++)
        if (!given[i])
            return vtctl_usage_error("op run", "%s needs --param %s=... (%s: %s)", info->name, info->params[i].name,
                                     param_type_name(info->params[i].type), info->params[i].doc);

    vt_dtype free_dt = VT_F32;
    if (out_dtype) {
        if (!op_shapes_has_free_dtype(op))
            return vtctl_usage_error("op run", "--out-dtype applies to Copy, GetRows and Dequantize only");
        if (!vt_dtype_from_name(out_dtype, &free_dt))
            return vtctl_usage_error("op run", "--out-dtype: unknown dtype '%s'", out_dtype);
    }

    /* inputs and INOUT outputs from their sources */
    for (int i = 0; i < n_ins; i++) {
        const char *src;
        if (!split_kv(ins[i], key, sizeof key, &src))
            return fail(&s, VTCTL_EXIT_USAGE, "--in wants NAME=SOURCE, got '%s'", ins[i]);
        int slot = operand_slot(info, key);
        if (slot < 0)
            return fail(&s, VTCTL_EXIT_USAGE, "%s has no input '%s' (inputs: %s)", info->name, key, names);
        if (s.arr[slot].present)
            return fail(&s, VTCTL_EXIT_USAGE, "--in %s given twice", key);
        vt_status st = input_source_load(src, &s.arr[slot], why, sizeof why);
        if (st != VT_OK)
            return fail(&s, VTCTL_EXIT_REFUSED, "--in %s: %s", key, why);
    }
    for (int i = 0; i < n_casts; i++) {
        const char *tn;
        if (!split_kv(casts[i], key, sizeof key, &tn))
            return fail(&s, VTCTL_EXIT_USAGE, "--in-dtype wants NAME=DTYPE, got '%s'", casts[i]);
        int slot = operand_slot(info, key);
        vt_dtype t;
        if (slot < 0 || !s.arr[slot].present)
            return fail(&s, VTCTL_EXIT_USAGE, "--in-dtype %s: no --in %s was given", key, key);
        if (!vt_dtype_from_name(tn, &t))
            return fail(&s, VTCTL_EXIT_USAGE, "--in-dtype %s: unknown dtype '%s'", key, tn);
        if (convert_input(key, &s.arr[slot], t, why, sizeof why) != VT_OK)
            return fail(&s, VTCTL_EXIT_REFUSED, "%s", why);
    }
    for (uint32_t i = 0; i < info->n_in + info->n_out; i++)
        if (s.arr[i].present && s.arr[i].dtype == NPY_RAW_BYTES)
            return fail(&s, VTCTL_EXIT_USAGE,
                        "%s holds raw bytes ('|u1'): name its block format with --in-dtype %s=q4_0",
                        i < info->n_in ? info->in[i].name : info->out[i - info->n_in].name,
                        i < info->n_in ? info->in[i].name : info->out[i - info->n_in].name);
    for (uint32_t j = 0; j < info->n_out; j++)
        if ((info->out[j].flags & VT_OPERAND_INOUT) && !s.arr[info->n_in + j].present)
            return fail(&s, VTCTL_EXIT_USAGE, "%s is read and updated in place: give --in %s=FILE.npy",
                        info->out[j].name, info->out[j].name);

    /* the other outputs from the inputs and params */
    vt_status st = op_shapes_infer(op, s.arr, info->n_in, info->params_size ? s.params : NULL, free_dt,
                                   s.arr + info->n_in, why, sizeof why);
    if (st != VT_OK)
        return fail(&s, st == VT_E_INVALID_ARG ? VTCTL_EXIT_USAGE : VTCTL_EXIT_REFUSED, "%s", why);
    return execute(&s, backend, dir, json);
}

int vtctl_cmd_op(int argc, char **argv)
{
    if (argc < 2)
        return vtctl_usage_error("op", "want 'op describe OP' or 'op run OP ...'");
    if (!strcmp(argv[1], "describe"))
        return cmd_describe(argc - 1, argv + 1);
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: vtctl op describe OP [--json]\n"
               "       vtctl op run OP --backend B[:DEV] --in NAME=FILE.npy ... [--param KEY=VALUE ...]\n"
               "                   [--in-dtype NAME=DTYPE ...] [--out-dtype DTYPE] --out DIR [--json]\n");
        return VTCTL_EXIT_OK;
    }
    return vtctl_usage_error("op", "unknown subcommand '%s' (describe, run)", argv[1]);
}
