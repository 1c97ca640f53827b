/* cmd_generate.c - `vtctl generate FILE.gguf --backend B[:DEV]
 * --prompt-tokens 1,2,3 -n N [--temp T --top-k K --top-p P --seed S]
 * [--ctx C] [--chunk T] [--kv f16|bf16|f32] [--no-graph] [--dump-logits F] [--json]`: token ids in, token
 * ids out through the model runner (vt_runner.h), with prefill and decode
 * tokens/s. `--devices A,B,...` instead of --backend runs the model split
 * by layers over those devices (vt_runner_create_split), the plan named;
 * `--budget BYTES` is every device's budget (default: each one's probe). Greedy without --temp; sampling through the
 * Sample op. Bad input (architecture, tensors, a token >= vocab, n beyond the context) is refused by name before any
 * device allocation. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vt/vt_number.h>
#include <vt/vt_runner.h>

#include "progress_bar.h"
#include "vtctl.h"
#include "vtctl_load.h"

/* Parse "1,2,3" into a fresh array. */
static int parse_tokens(const char *s, int32_t **out, uint32_t *n)
{
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    int32_t *t = malloc(cap * sizeof *t);
    if (!t)
        return -1;
    uint32_t k = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || v > INT32_MAX || (*end && *end != ',')) {
            free(t);
            return -1;
        }
        t[k++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    if (k == 0) {
        free(t);
        return -1;
    }
    *out = t;
    *n = k;
    return 0;
}

/* Option opt's value s as a real number in [lo, hi] (NaN is in no range):
 * -1 to go on, else the usage exit code after saying why. */
static int number(const char *cmd, const char *opt, const char *s, double lo, double hi, double *v)
{
    char *end;
    *v = strtod(s, &end);
    if (!*s || *end || !(*v >= lo && *v <= hi))
        return vtctl_usage_error(cmd, "%s '%s' is not a number in [%g, %g]", opt, s, lo, hi);
    return -1;
}

/* Option opt's value s as a whole number in [lo, hi] (vt_parse_i64's
 * syntax): -1 to go on, else the usage exit code after saying why. */
static int count(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *v)
{
    if (!vt_parse_i64(s, lo, hi, v))
        return vtctl_usage_error(cmd, "%s '%s' is not a whole number in [%lld, %lld]", opt, s, (long long)lo,
                                 (long long)hi);
    return -1;
}

/* Generate step by step, writing every step's n_vocab f32 logits to path
 * (raw, n_gen rows) for a cross-backend comparison; no timing. */
static vt_status generate_dumping(vt_runner *r, const int32_t *prompt, uint32_t n_prompt, uint32_t n_gen,
                                  const vt_sampler *s, int32_t *out, const char *path)
{
    uint32_t V = vt_runner_get_info(r)->n_vocab;
    float *l = malloc((size_t)V * sizeof *l);
    FILE *f = fopen(path, "wb");
    vt_status st = l && f ? vt_runner_reset(r) : VT_E_IO;
    if (!l || !f)
        fprintf(stderr, "vtctl generate: cannot write '%s'\n", path);
    for (uint32_t i = 0; st == VT_OK && i < n_gen; i++) {
        st = i == 0 ? vt_runner_step(r, prompt, n_prompt, s, 0, &out[0], l)
                    : vt_runner_step(r, NULL, 1, s, i, &out[i], l);
        if (st == VT_OK && fwrite(l, sizeof *l, V, f) != V)
            st = VT_E_IO;
    }
    if (f && fclose(f) != 0)
        st = VT_E_IO;
    free(l);
    return st;
}

int vtctl_cmd_generate(int argc, char **argv)
{
    static const struct option longopts[] = {{"backend", required_argument, NULL, 'b'},
                                             {"prompt-tokens", required_argument, NULL, 'p'},
                                             {"temp", required_argument, NULL, 't'},
                                             {"top-k", required_argument, NULL, 'k'},
                                             {"top-p", required_argument, NULL, 'P'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"ctx", required_argument, NULL, 'c'},
                                             {"chunk", required_argument, NULL, 'C'},
                                             {"kv", required_argument, NULL, 'v'},
                                             {"no-graph", no_argument, NULL, 'G'},
                                             {"json", no_argument, NULL, 'j'},
                                             {"dump-logits", required_argument, NULL, 'L'},
                                             {"devices", required_argument, NULL, 'D'},
                                             {"budget", required_argument, NULL, 'B'},
                                             {NULL, 0, NULL, 0}};
    const char *backend = "cpu:0", *prompt_s = NULL, *logits_path = NULL, *devices = NULL;
    int64_t n_gen = 16, ctx = 0, chunk = 0, top_k;
    uint64_t budget = 0;
    double d;
    vt_sampler s = {0, 0, 1.0f, 0};
    int kv = VT_RUNNER_KV_F16;
    bool json = false;
    uint32_t flags = 0;
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "n:", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': backend = optarg; break;
        case 'p': prompt_s = optarg; break;
        case 'n':
            if ((rc = count(argv[0], "-n", optarg, 0, 10000000, &n_gen)) >= 0)
                return rc;
            break;
        case 't':
            if ((rc = number(argv[0], "--temp", optarg, 0, 1e6, &d)) >= 0)
                return rc;
            s.temperature = (float)d;
            break;
        case 'k':
            if ((rc = count(argv[0], "--top-k", optarg, 0, INT32_MAX, &top_k)) >= 0)
                return rc;
            s.top_k = (int32_t)top_k;
            break;
        case 'P':
            if ((rc = number(argv[0], "--top-p", optarg, 1e-9, 1, &d)) >= 0)
                return rc;
            s.top_p = (float)d;
            break;
        case 's':
            if (!vt_parse_u64(optarg, &s.seed))
                return vtctl_usage_error(argv[0], "--seed '%s' is not an unsigned number", optarg);
            break;
        case 'c':
            if ((rc = count(argv[0], "--ctx", optarg, 1, 10000000, &ctx)) >= 0)
                return rc;
            break;
        case 'C':
            if ((rc = count(argv[0], "--chunk", optarg, 1, 1000000, &chunk)) >= 0)
                return rc;
            break;
        case 'v':
            kv = !strcmp(optarg, "f16")    ? VT_RUNNER_KV_F16
                 : !strcmp(optarg, "bf16") ? VT_RUNNER_KV_BF16
                 : !strcmp(optarg, "f32")  ? VT_RUNNER_KV_F32
                                           : -1;
            if (kv < 0)
                return vtctl_usage_error(argv[0], "--kv '%s': f16, bf16 or f32", optarg);
            break;
        case 'j': json = true; break;
        case 'G': flags |= VT_RUNNER_NO_GRAPH; break;
        case 'L': logits_path = optarg; break;
        case 'D': devices = optarg; break;
        case 'B':
            if (!vtctl_parse_bytes(optarg, &budget) || budget == 0)
                return vtctl_usage_error(argv[0], "--budget '%s' is not a positive byte count", optarg);
            break;
        default: return vtctl_usage_error(argv[0], "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return vtctl_usage_error(argv[0], "name one GGUF file");
    if (!prompt_s)
        return vtctl_usage_error(argv[0], "--prompt-tokens is required (e.g. 1,2,3)");
    int32_t *prompt = NULL, *out = NULL;
    uint32_t n_prompt = 0;
    if (parse_tokens(prompt_s, &prompt, &n_prompt) != 0)
        return vtctl_usage_error(argv[0], "--prompt-tokens '%s' is not a list of token ids", prompt_s);

    rc = VTCTL_EXIT_REFUSED;
    vt_gguf *g = NULL;
    vt_registry *reg = NULL;
    vt_runner *r = NULL;
    vt_runner_info info;
    vt_status st = vt_gguf_open(argv[optind], &g);
    if (st == VT_OK)
        st = vt_runner_check_file(g, &info);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl generate: %s\n", vt_last_error());
        goto done;
    }
    /* Bad input is named before the registry or any device is touched. */
    for (uint32_t i = 0; i < n_prompt; i++)
        if ((uint32_t)prompt[i] >= info.n_vocab) {
            fprintf(stderr, "vtctl generate: prompt token %d (index %u) is outside the vocabulary of %u of %s\n",
                    prompt[i], i, info.n_vocab, argv[optind]);
            goto done;
        }
    uint32_t want_ctx = ctx > 0 ? (uint32_t)ctx : 4096;
    if (want_ctx > info.n_ctx_train)
        want_ctx = info.n_ctx_train;
    /* the prompt's positions, then one per decode step (the last token is not fed) */
    if ((uint64_t)n_prompt + (uint64_t)(n_gen > 0 ? n_gen - 1 : 0) > (uint64_t)want_ctx) {
        fprintf(stderr, "vtctl generate: %u prompt tokens + -n %lld exceed the context of %u tokens (--ctx)\n",
                n_prompt, (long long)n_gen, want_ctx);
        goto done;
    }
    if (!vtctl_open(&reg))
        goto done;
    vt_device *devs[VT_RUNNER_MAX_DEVICES];
    uint32_t n_dev = 1;
    if (devices) {
        rc = vtctl_parse_devices(reg, argv[0], devices, devs, &n_dev);
        if (rc != VTCTL_EXIT_OK)
            goto done;
        rc = VTCTL_EXIT_REFUSED;
    } else if (vt_registry_find_device(reg, backend, &devs[0]) != VT_OK) {
        fprintf(stderr, "vtctl generate: %s\n", vt_last_error());
        goto done;
    }
    vt_device *dev = devs[0];
    progress_bar bar;
    progress_bar_init(&bar, devices ? devices : vt_device_id(dev));
    vt_runner_options o = {sizeof o, want_ctx, (uint32_t)chunk, kv, -1, budget, 0, progress_bar_update, &bar, flags};
    st = devices ? vt_runner_create_split(g, devs, n_dev, &o, &r) : vt_runner_create(g, dev, &o, &r);
    progress_bar_end(&bar);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl generate: %s\n", vt_last_error());
        goto done;
    }
    out = calloc((size_t)n_gen + 1, sizeof *out);
    vt_generate_stats gs = {0};
    if (!out)
        st = VT_E_NO_MEMORY;
    else if (logits_path)
        st = generate_dumping(r, prompt, n_prompt, (uint32_t)n_gen, &s, out, logits_path);
    else
        st = vt_runner_generate(r, prompt, n_prompt, (uint32_t)n_gen, &s, out, &gs);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl generate: %s\n", out ? vt_last_error() : "out of host memory");
        goto done;
    }
    double pre = gs.prefill_s > 0 ? n_prompt / gs.prefill_s : 0;
    double dec = gs.decode_s > 0 ? gs.n_decoded / gs.decode_s : 0;
    const vt_runner_info *ri = vt_runner_get_info(r);
    json_writer w;
    rec_writer rw;
    rec_start(&rw, &w, json, 0, 0);
    rec_object_begin(&rw, NULL, NULL);
    const char *where = devices ? devices : vt_device_id(dev);
    rec_str(&rw, "device", NULL, where);
    rec_str(&rw, "arch", NULL, ri->arch);
    rec_int_list(&rw, "tokens", "tokens:", out, (size_t)n_gen, ",");
    rec_uint_as(&rw, "ctx", "", ri->ctx, "%s %s on %s: ctx %u, %u planned ops (%u on the CPU tier), decode %s%s",
                ri->arch, argv[optind], where, ri->ctx, ri->n_plan_ops, ri->n_cpu_tier,
                ri->decode_graph ? "as a replayed graph" : "op by op", ri->graph_note);
    rec_str_as(&rw, "placement", devices ? "" : NULL, ri->placement, "layer split: %s", ri->placement);
    rec_uint(&rw, "plan_ops", NULL, ri->n_plan_ops);
    rec_uint(&rw, "cpu_tier_ops", NULL, ri->n_cpu_tier);
    rec_bool(&rw, "decode_graph", NULL, ri->decode_graph);
    rec_uint(&rw, "weight_bytes", NULL, ri->weight_bytes);
    rec_uint(&rw, "state_bytes", NULL, ri->state_bytes);
    rec_uint(&rw, "merged_groups", NULL, ri->n_merged);
    rec_uint_as(&rw, "n_prompt", "prefill:", n_prompt, "%u tokens in %.4f s = %.1f tok/s", n_prompt, gs.prefill_s, pre);
    rec_double(&rw, "prefill_tok_s", NULL, pre);
    rec_double_as(&rw, "decode_tok_s", "decode: ", dec, "%u tokens in %.4f s = %.1f tok/s", gs.n_decoded, gs.decode_s,
                  dec);
    rec_object_end(&rw, false);
    rec_finish(&rw);
    rc = VTCTL_EXIT_OK;
done:
    vt_runner_destroy(r);
    vt_gguf_close(g);
    if (reg)
        vt_registry_close(reg);
    free(prompt);
    free(out);
    return rc;
}
