/* vtctl.c - the operator's tool: command dispatch, usage and helpers. */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtctl.h"

static const struct {
    const char *name;
    vtctl_cmd_fn fn;
    const char *args;
    const char *summary;
} commands[] = {
    {"backend-list", vtctl_cmd_backend_list, "[--isolate] [--json]",
     "which backends loaded, from where, their devices; why not"},
    {"caps", vtctl_cmd_caps, "[BACKEND[:DEV]] [--json]", "every capability of a device, probed now"},
    {"ops", vtctl_cmd_ops, "BACKEND[:DEV] [--op NAME] [--strict]", "the op table and the tier each op resolves to"},
    {"inspect", vtctl_cmd_inspect, "FILE.gguf [--all] [--json]", "a GGUF file, validated: header, KVs, tensors"},
    {"fit", vtctl_cmd_fit, "FILE.gguf [--backend B | --devices A,B] [--budget BYTES] [--ctx N]",
     "the load plan and whether it fits the device"},
    {"stage", vtctl_cmd_stage, "FILE.gguf [--backend B] [--verify] [--chunk BYTES]",
     "stage a model's weights onto a device"},
    {"check", vtctl_cmd_check, "[--backend B[:DEV]] [--op NAME] [--seed N]", "conformance against the cpu oracle"},
    {"op", vtctl_cmd_op, "describe OP | run OP --backend B --in N=F.npy --out DIR",
     "describe an op, or run one on .npy files"},
    {"mkmodel", vtctl_cmd_mkmodel, "--arch A --preset P --wtype T --seed S OUT.gguf",
     "write a synthetic qwen3/qwen3moe/qwen3next model"},
    {"generate", vtctl_cmd_generate, "FILE.gguf --backend B|--devices A,B --prompt-tokens 1,2 -n N [--temp T]",
     "generate token ids with the model runner"},
    {"bench", vtctl_cmd_bench, "[--backend B] [--op NAME] [--shape ..]", "time ops against the copy bandwidth"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: vtctl COMMAND [ARGS] [--json]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-13s %-56s %s\n", commands[i].name, commands[i].args, commands[i].summary);
    fprintf(f, "  %-13s %-56s %s\n", "version", "", "print the vt version and plugin ABI");
    fprintf(f, "\nenvironment: VT_PLUGIN_PATH, VT_BACKENDS, VT_LOADER_DEBUG, VT_LOADER_ISOLATE, VT_TIER_POLICY,\n"
               "             VT_TIER_LOG, VT_NUM_THREADS, VT_CPU_SIMD\n"
               "exit status: 0 success (zero devices included), 1 refusal or failed check, 2 bad usage\n");
}

int vtctl_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vtctl %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(run 'vtctl help' for usage)\n");
    va_end(ap);
    return VTCTL_EXIT_USAGE;
}

int vtctl_option(vtctl_opts *o)
{
    if (!o->started) {
        optind = 1;
        opterr = 0;
        o->started = true;
    }
    int c = getopt_long(o->argc, o->argv, "h", o->opts, NULL);
    if (c == -1)
        return 0;
    if (c == 'h') {
        fputs(o->usage, stdout);
        o->exit_code = VTCTL_EXIT_OK;
        return -1;
    }
    if (c == '?' || c == ':') {
        bool takes_values = false;
        for (const struct option *p = o->opts; p->name; p++)
            takes_values |= p->has_arg == required_argument;
        o->exit_code = vtctl_usage_error(o->cmd, "unknown option%s '%s'", takes_values ? " or missing value" : "",
                                         o->argv[optind - 1]);
        return -1;
    }
    return c;
}

bool vtctl_open(vt_registry **reg)
{
    return vtctl_open_flags(reg, 0);
}

/* $VT_TIER_LOG=1: the library reports every CPU-tier run; vtctl prints it. */
static void print_cpu_tier_run(void *user, const vt_device *dev, vt_op op, const char *text)
{
    (void)user;
    (void)dev;
    (void)op;
    fprintf(stderr, "vt: %s\n", text);
}

/* Open the registry with flags and a tier policy option, or print why not. */
static bool open_registry(vt_registry **reg, uint32_t flags, uint32_t tier_policy)
{
    vt_registry_options o = {sizeof o, NULL, NULL, -1, flags, tier_policy};
    const char *tier_log = getenv("VT_TIER_LOG");
    if (tier_log && *tier_log && strcmp(tier_log, "0") != 0)
        o.on_cpu_tier = print_cpu_tier_run;
    vt_status st = vt_registry_open(reg, &o);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl: cannot open the backend registry: %s: %s\n", vt_status_name(st), vt_last_error());
        return false;
    }
    return true;
}

bool vtctl_open_flags(vt_registry **reg, uint32_t flags)
{
    return open_registry(reg, flags, VT_TIER_POLICY_ENV);
}

int vtctl_open_policy(const char *cmd, uint32_t tier_policy, vt_registry **reg, bool *strict)
{
    if (!open_registry(reg, 0, tier_policy))
        return VTCTL_EXIT_REFUSED;
    uint32_t policy;
    if (vt_registry_tier_policy_get(*reg, &policy) != VT_OK) {
        fprintf(stderr, "vtctl %s: %s\n", cmd, vt_last_error());
        vt_registry_close(*reg);
        *reg = NULL;
        return VTCTL_EXIT_USAGE;
    }
    *strict = policy == VT_TIER_POLICY_STRICT;
    return VTCTL_EXIT_OK;
}

void vtctl_print_warnings(const vt_registry *reg)
{
    char text[4096];
    for (size_t i = 0; i < vt_registry_warning_count(reg); i++)
        fprintf(stderr, "vtctl: warning: %s\n", vtctl_text(vt_registry_warning(reg, i), text, sizeof text));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return VTCTL_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return VTCTL_EXIT_OK;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("vt %s (plugin ABI %u)\n", vt_version(), VT_PLUGIN_ABI);
        return VTCTL_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "vtctl: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return VTCTL_EXIT_USAGE;
}

const char *vtctl_text(const char *s, char *buf, size_t size)
{
    vt_gguf_escape(s ? s : "", s ? strlen(s) : 0, buf, size);
    return buf;
}
