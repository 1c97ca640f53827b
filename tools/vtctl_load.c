/* vtctl_load.c - option parsing and opening shared by `vtctl fit` and
 * `vtctl stage`. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl_load.h"

bool vtctl_parse_bytes(const char *s, uint64_t *out)
{
    /* the digits by the one strict parser: no space, no sign, no overflow */
    size_t k = 0;
    while (s[k] >= '0' && s[k] <= '9')
        k++;
    char num[32];
    uint64_t v;
    if (k == 0 || k >= sizeof num)
        return false;
    memcpy(num, s, k);
    num[k] = '\0';
    if (!vt_parse_u64(num, &v))
        return false;
    const char *end = s + k;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'K':
    case 'k':
        shift = 10;
        end++;
        break;
    case 'M':
    case 'm':
        shift = 20;
        end++;
        break;
    case 'G':
    case 'g':
        shift = 30;
        end++;
        break;
    case 'T':
    case 't':
        shift = 40;
        end++;
        break;
    default: return false;
    }
    if (*end == 'i' && shift)
        end++;
    if (*end == 'B' && shift)
        end++;
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

/* A vt_op_class from its name, or -1. */
static int op_class_of(const char *s)
{
    static const int classes[] = {VT_OP_CLASS_MATMUL, VT_OP_CLASS_GATHER, VT_OP_CLASS_MOE_EXPERT, VT_OP_CLASS_NONE};
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (!strcmp(s, vt_op_class_name(classes[i])))
            return classes[i];
    return -1;
}

int vtctl_load_parse(const char *cmd, int argc, char **argv, vtctl_load_args *a)
{
    static const struct option opts[] = {
        {"backend", required_argument, NULL, 'b'}, {"budget", required_argument, NULL, 'B'},
        {"ctx", required_argument, NULL, 'c'},     {"batch", required_argument, NULL, 'n'},
        {"expand", required_argument, NULL, 'e'},  {"chunk", required_argument, NULL, 'k'},
        {"no-zero-copy", no_argument, NULL, 'z'},  {"class", required_argument, NULL, 'C'},
        {"verify", no_argument, NULL, 'v'},        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},          {0}};
    memset(a, 0, sizeof *a);
    a->options.struct_size = sizeof a->options;
    char usage[512];
    snprintf(usage, sizeof usage,
             "usage: vtctl %s FILE.gguf [--backend B[:DEV]] [--budget BYTES] [--ctx N] [--batch B]\n"
             "       [--expand f16|bf16|f32] [--class TENSOR=matmul|gather|moe-expert|none ...]%s [--json]\n",
             cmd, strcmp(cmd, "stage") ? "" : " [--chunk BYTES] [--no-zero-copy] [--verify]");
    vtctl_opts o = {cmd, usage, opts, argc, argv};
    int c;
    while ((c = vtctl_option(&o)) > 0) {
        uint64_t v = 0;
        switch (c) {
        case 'b': a->backend = optarg; break;
        case 'B':
            if (!vtctl_parse_bytes(optarg, &v) || v == 0)
                return vtctl_usage_error(cmd, "--budget '%s' is not a positive byte count", optarg);
            a->options.budget_bytes = v;
            a->options.budget_origin = "--budget";
            break;
        case 'c':
            if (!vtctl_parse_bytes(optarg, &v))
                return vtctl_usage_error(cmd, "--ctx '%s' is not a number", optarg);
            a->options.ctx = v;
            break;
        case 'n':
            if (!vtctl_parse_bytes(optarg, &v) || v == 0)
                return vtctl_usage_error(cmd, "--batch '%s' is not a positive number", optarg);
            a->options.batch = v;
            break;
        case 'e':
            if (!strcmp(optarg, "f16"))
                a->options.expand = VT_EXPAND_F16;
            else if (!strcmp(optarg, "bf16"))
                a->options.expand = VT_EXPAND_BF16;
            else if (!strcmp(optarg, "f32"))
                a->options.expand = VT_EXPAND_F32;
            else
                return vtctl_usage_error(cmd, "--expand takes f16, bf16 or f32, not '%s'", optarg);
            break;
        case 'k':
            if (!vtctl_parse_bytes(optarg, &v) || v < 4096)
                return vtctl_usage_error(cmd, "--chunk '%s' must be at least 4096 bytes", optarg);
            a->options.chunk_bytes = v;
            break;
        case 'z': a->options.flags |= VT_LOAD_NO_ZERO_COPY; break;
        case 'C': {
            char *eq = strrchr(optarg, '=');
            int cl = eq ? op_class_of(eq + 1) : -1;
            if (!eq || eq == optarg || cl < 0)
                return vtctl_usage_error(cmd, "--class '%s': use TENSOR=matmul|gather|moe-expert|none", optarg);
            if (a->options.n_classes == VTCTL_MAX_CLASSES)
                return vtctl_usage_error(cmd, "more than %d --class options", VTCTL_MAX_CLASSES);
            *eq = '\0'; /* the tensor name ends at the last '=' */
            a->classes[a->options.n_classes++] = (vt_tensor_class){optarg, (uint32_t)cl};
            a->options.classes = a->classes;
            break;
        }
        case 'v': a->verify = true; break;
        case 'j': a->json = true; break;
        }
    }
    if (c < 0)
        return o.exit_code;
    if (argc - optind != 1)
        return vtctl_usage_error(cmd, "name one FILE.gguf");
    a->file = argv[optind];
    return -1;
}

int vtctl_load_open(const vtctl_load_args *a, vt_registry **reg, vt_gguf **g, vt_device **dev)
{
    *reg = NULL;
    *g = NULL;
    *dev = NULL;
    vt_status st = vt_gguf_open(a->file, g);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl: %s\n", vt_last_error());
        return VTCTL_EXIT_REFUSED;
    }
    if (!vtctl_open(reg)) {
        vt_gguf_close(*g);
        return VTCTL_EXIT_REFUSED;
    }
    if (a->backend) {
        st = vt_registry_find_device(*reg, a->backend, dev);
    } else {
        /* Default: the first device that stages weights, else cpu:0. */
        for (size_t i = 0; i < vt_registry_device_count(*reg) && !*dev; i++) {
            vt_device_caps caps = VT_DEVICE_CAPS_INIT;
            vt_device *d = vt_registry_device(*reg, i);
            if (vt_device_probe(d, &caps) == VT_OK && caps.needs_weight_staging)
                *dev = d;
        }
        st = *dev ? VT_OK : vt_registry_find_device(*reg, "cpu:0", dev);
    }
    if (st != VT_OK) {
        fprintf(stderr, "vtctl: %s\n", vt_last_error());
        vt_gguf_close(*g);
        vt_registry_close(*reg);
        return VTCTL_EXIT_REFUSED;
    }
    return VTCTL_EXIT_OK;
}
