/* cmd_check.c - `vtctl check [--backend B[:DEV]] [--op NAME] [--seed N]
 * [--allow-refused] [--json]`: the conformance suite. Every (op,
 * signature) of the catalogue runs on the device on random decode and
 * prefill shapes and is compared with the cpu oracle under SPEC 7's
 * tolerances: pass (with the error), FAIL (with where and why), refused
 * (with the resolution's reason) or no cpu oracle kernel yet. Exit 1 when
 * anything fails or is refused (SPEC 9: a refusal exits 1), or has no
 * oracle (it was not checked); --allow-refused lists refused and unchecked
 * signatures without failing. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"
#include "vtctl.h"

typedef struct check_counts {
    unsigned pass, fail, refused, no_oracle;
} check_counts;

static void count(check_counts *c, vtc_outcome o)
{
    switch (o) {
    case VTC_PASS: c->pass++; break;
    case VTC_FAIL: c->fail++; break;
    case VTC_REFUSED: c->refused++; break;
    case VTC_NO_ORACLE: c->no_oracle++; break;
    }
}

/* The refusal message without its "missing op X (id) on dev (...): " head. */
static const char *reason_tail(const char *reason)
{
    const char *p = strstr(reason, "): ");
    return p ? p + 3 : reason;
}

/* One result: a table row or a JSON object. */
static void emit_row(rec_writer *w, const vtc_result *r)
{
    const vt_op_info *info = vt_op_get_info(r->op);
    const char *outcome = vtc_outcome_name(r->outcome);
    char sig[96];
    vt_sig_format(r->sig, sig, sizeof sig);
    bool pass = r->outcome == VTC_PASS, has_err = r->n_cases && r->outcome != VTC_FAIL;
    rec_row_begin(w, NULL);
    rec_uint_as(w, "id", "", r->op, "%3u  ", r->op);
    rec_str_as(w, "name", "", info->name, "%-22s  ", info->name);
    rec_str_as(w, "signature", "", sig, "%-22s  ", sig);
    rec_str_as(w, "result", "", outcome, "%-9s", outcome);
    if (has_err)
        rec_double_as(w, "error", pass ? "" : NULL, r->err, "  err %.2g", r->err);
    else
        rec_str_as(w, "error", pass ? "" : NULL, NULL, "  err %.2g", r->err);
    rec_uint(w, "cases", NULL, r->n_cases);
    rec_str_as(w, "detail", pass ? NULL : "", r->detail, "  %s",
               r->outcome == VTC_REFUSED ? reason_tail(r->detail) : r->detail);
    rec_row_end(w);
}

/* Check every selected (op, signature) on dev; returns the counts. */
static check_counts check_device(vt_device *dev, vt_device *oracle, vt_op only, uint64_t seed, rec_writer *w)
{
    check_counts counts = {0};
    rec_object_begin(w, NULL, NULL);
    rec_str(w, "device", NULL, vt_device_id(dev));
    if (!rec_json(w)) {
        vt_device_caps caps = VT_DEVICE_CAPS_INIT;
        bool probed = vt_device_probe(dev, &caps) == VT_OK;
        rec_text(w, "check %s (%s) against the cpu oracle %s, seed %llu\n", vt_device_id(dev),
                 probed ? caps.name : "not probed", oracle ? vt_device_id(oracle) : "(none)", (unsigned long long)seed);
        rec_text(w, "  %3s  %-22s  %-22s  %-9s  %s\n", "ID", "OP", "SIGNATURE", "RESULT", "ERROR / WHY");
    }
    rec_text_layout(w, 2, 0);
    rec_array_begin(w, "results");
    for (uint32_t i = 0; i < vt_op_catalog_size(); i++) {
        const vt_op_info *info = vt_op_catalog_entry(i);
        if (only && info->op != only)
            continue;
        for (uint32_t s = 0; s < info->n_sigs; s++) {
            vtc_result r;
            vtc_check(dev, oracle, info->op, info->sigs[s], seed, &r);
            count(&counts, r.outcome);
            emit_row(w, &r);
            fflush(stdout);
        }
    }
    rec_array_end(w);
    rec_text_layout(w, 0, 0);
    rec_object_begin(w, "summary", NULL);
    rec_uint_as(w, "pass", "", counts.pass,
                "%s: %u signatures: %u pass, %u FAIL, %u refused, %u without a cpu oracle kernel yet\n",
                vt_device_id(dev), counts.pass + counts.fail + counts.refused + counts.no_oracle, counts.pass,
                counts.fail, counts.refused, counts.no_oracle);
    rec_uint(w, "fail", NULL, counts.fail);
    rec_uint(w, "refused", NULL, counts.refused);
    rec_uint(w, "no_oracle", NULL, counts.no_oracle);
    rec_object_end(w, false);
    rec_object_end(w, false);
    return counts;
}

static bool parse_seed(const char *s, uint64_t *out)
{
    return vt_parse_u64(s, out);
}

int vtctl_cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"backend", required_argument, NULL, 'b'},
                                         {"op", required_argument, NULL, 'o'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"allow-refused", no_argument, NULL, 'r'},
                                         {0}};
    bool json = false, have_seed = false, allow_refused = false;
    const char *backend = NULL, *op_name = NULL;
    uint64_t seed = 0;
    vtctl_opts o = {"check",
                    "usage: vtctl check [--backend B[:DEV]] [--op NAME] [--seed N] [--allow-refused] [--json]\n"
                    "exit 1 when a signature FAILs or is refused (or has no cpu oracle kernel);\n"
                    "--allow-refused lists refused ones without failing\n",
                    opts, argc, argv};
    int c;
    while ((c = vtctl_option(&o)) > 0) {
        if (c == 'j')
            json = true;
        else if (c == 'r')
            allow_refused = true;
        else if (c == 'b')
            backend = optarg;
        else if (c == 'o')
            op_name = optarg;
        else if (c == 's') {
            if (!parse_seed(optarg, &seed))
                return vtctl_usage_error("check", "--seed wants an unsigned number, got '%s'", optarg);
            have_seed = true;
        }
    }
    if (c < 0)
        return o.exit_code;
    if (optind != argc)
        return vtctl_usage_error("check", "unexpected argument '%s' (the device goes after --backend)", argv[optind]);
    vt_op only = VT_OP_NONE;
    if (op_name && (only = vt_op_from_name(op_name)) == VT_OP_NONE)
        return vtctl_usage_error("check", "no op named '%s' in the catalogue", op_name);
    if (!have_seed)
        seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);

    vt_registry *reg;
    bool strict;
    int rc = vtctl_open_policy("check", VT_TIER_POLICY_ENV, &reg, &strict);
    if (rc != VTCTL_EXIT_OK)
        return rc;
    vt_device *oracle = NULL;
    if (vt_registry_find_device(reg, "cpu:0", &oracle) != VT_OK) {
        fprintf(stderr, "vtctl check: no cpu oracle: %s\n", vt_last_error());
        vt_registry_close(reg);
        return VTCTL_EXIT_REFUSED;
    }
    vt_device *devs[64];
    size_t n_devs = 0;
    if (backend) {
        if (vt_registry_find_device(reg, backend, &devs[0]) != VT_OK) {
            fprintf(stderr, "vtctl check: %s\n", vt_last_error());
            vt_registry_close(reg);
            return VTCTL_EXIT_REFUSED;
        }
        n_devs = 1;
    } else {
        for (size_t i = 0; i < vt_registry_device_count(reg) && n_devs < 64; i++)
            devs[n_devs++] = vt_registry_device(reg, i);
    }
    json_writer w;
    rec_writer rw;
    rec_start(&rw, &w, json, 0, 0);
    if (!json)
        vtctl_print_warnings(reg);
    rec_object_begin(&rw, NULL, NULL);
    rec_uint(&rw, "seed", NULL, seed);
    rec_str(&rw, "oracle", NULL, vt_device_id(oracle));
    rec_str(&rw, "policy", NULL, strict ? "strict" : "portable");
    rec_array_begin(&rw, "devices");
    unsigned failed = 0, refused = 0;
    for (size_t i = 0; i < n_devs; i++) {
        check_counts k = check_device(devs[i], oracle, only, seed, &rw);
        failed += k.fail;
        refused += k.refused + k.no_oracle;
    }
    bool ok = !failed && (allow_refused || !refused);
    rec_array_end(&rw);
    rec_uint_as(&rw, "failed", failed ? "" : NULL, failed, "%u signature(s) FAILED; reproduce with --seed %llu", failed,
                (unsigned long long)seed);
    rec_uint_as(&rw, "refused", refused ? "" : NULL, refused,
                "%u signature(s) refused or without a cpu oracle kernel%s", refused,
                allow_refused ? " (allowed by --allow-refused)"
                              : ": not checked, so the check fails (--allow-refused lists them without failing)");
    rec_bool(&rw, "allow_refused", NULL, allow_refused);
    rec_object_end(&rw, false);
    rec_finish(&rw);
    vt_registry_close(reg);
    return ok ? VTCTL_EXIT_OK : VTCTL_EXIT_REFUSED;
}
