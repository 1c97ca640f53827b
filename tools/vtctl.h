/* vtctl.h - shared pieces of the vtctl commands. */
#ifndef VT_VTCTL_H
#define VT_VTCTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include <vt/vt.h>

#include "json_writer.h"
#include "record.h"

/* Exit codes (SPEC 9). */
#define VTCTL_EXIT_OK      0
#define VTCTL_EXIT_REFUSED 1 /* a refusal, a failed check, a lookup that failed */
#define VTCTL_EXIT_USAGE   2 /* bad usage */

/* A command: argv[0] is the command name. Returns the exit code. */
typedef int (*vtctl_cmd_fn)(int argc, char **argv);

int vtctl_cmd_backend_list(int argc, char **argv);
int vtctl_cmd_caps(int argc, char **argv);
int vtctl_cmd_ops(int argc, char **argv);
int vtctl_cmd_inspect(int argc, char **argv);
int vtctl_cmd_fit(int argc, char **argv);
int vtctl_cmd_stage(int argc, char **argv);
int vtctl_cmd_check(int argc, char **argv);
int vtctl_cmd_op(int argc, char **argv);
int vtctl_cmd_bench(int argc, char **argv);
int vtctl_cmd_mkmodel(int argc, char **argv);
int vtctl_cmd_generate(int argc, char **argv);

/* Report bad usage of cmd on stderr; returns VTCTL_EXIT_USAGE. */
/* s as one line of safe text in buf (vt_gguf_escape: control bytes and
 * escape sequences from files or plugin names never reach the terminal). */
const char *vtctl_text(const char *s, char *buf, size_t size);

int vtctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One command's command line, read option by option by vtctl_option. */
typedef struct vtctl_opts {
    const char *cmd;           /* the command, as messages name it ("ops", "op run") */
    const char *usage;         /* what --help (-h) prints on stdout */
    const struct option *opts; /* getopt_long's table; its 'h' entry is --help */
    int argc;
    char **argv;
    int exit_code; /* set when vtctl_option returns -1 */
    bool started;  /* set by the first call (which resets getopt) */
} vtctl_opts;

/* The next option of o's command line: its val (> 0), 0 when the options
 * are done (argv[optind] is the first operand), or -1 when the command is
 * to return o->exit_code: after printing the usage for --help
 * (VTCTL_EXIT_OK), or after reporting an unknown option or a missing value
 * (VTCTL_EXIT_USAGE). Every command's option loop is
 * `while ((c = vtctl_option(&o)) > 0) ...; if (c < 0) return o.exit_code;` */
int vtctl_option(vtctl_opts *o);

/* Open the registry from the environment (plus VT_REGISTRY_* flags), or
 * print why not and return false. */
bool vtctl_open_flags(vt_registry **reg, uint32_t flags);

/* vtctl_open_flags with no flags. */
bool vtctl_open(vt_registry **reg);

/* Open the registry for cmd with tier_policy as its option
 * (VT_TIER_POLICY_ENV: the environment's) and say whether the policy the
 * registry fixed is strict: the one source of the policy vtctl shows and
 * resolves under. Returns VTCTL_EXIT_OK, or the exit code after printing
 * why: VTCTL_EXIT_USAGE for a bad $VT_TIER_POLICY (the registry is then
 * closed), VTCTL_EXIT_REFUSED when the registry does not open. */
int vtctl_open_policy(const char *cmd, uint32_t tier_policy, vt_registry **reg, bool *strict);

/* Print the registry's warnings to stderr (text mode). */
void vtctl_print_warnings(const vt_registry *reg);

/* Write a device's caps (and staging decisions) as one record: a JSON
 * object, or the text of `vtctl caps` (b: its backend, for the path). */
void vtctl_write_caps(rec_writer *r, vt_device *dev, const vt_device_caps *c, const vt_backend_info *b);

#endif
