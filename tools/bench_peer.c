/* bench_peer.c - run the peer benchmark (bench_peer.h) as a child process
 * (no shell: the path is passed as is) and read its timing line. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_peer.h"

#include <vt/vt_op.h>

#define OUT_MAX (256u << 10)

const char *bench_peer_type(vt_dtype t)
{
    switch (t) {
    case VT_F32: return "f32";
    case VT_F16: return "f16";
    case VT_BF16: return "bf16";
#define Q_CASE(id, f) case id:
        VT_Q_FORMATS(Q_CASE)
#undef Q_CASE
        break;
    default: return NULL;
    }
    /* A block format: vt's name, with ggml's capital K for the K-quants
     * (q4_k -> q4_K). */
    static _Thread_local char name[16];
    snprintf(name, sizeof name, "%s", vt_dtype_name(t));
    size_t n = strlen(name);
    if (n > 2 && name[n - 2] == '_' && name[n - 1] == 'k')
        name[n - 1] = 'K';
    return name;
}

bool bench_peer_parse(const char *out, int *runs, double *us)
{
    for (const char *p = strstr(out, " runs - "); p; p = strstr(p + 1, " runs - ")) {
        const char *s = p;
        while (s > out && s[-1] >= '0' && s[-1] <= '9')
            s--;
        if (s == p)
            continue;
        char *end = NULL;
        double t = strtod(p + 8, &end);
        if (end == p + 8 || strncmp(end, " us/run", 7) != 0 || !(t > 0))
            continue;
        *runs = atoi(s);
        *us = t;
        return true;
    }
    return false;
}

/* The last line of text that says something (for an error message). */
static void last_line(const char *out, char *buf, size_t size)
{
    size_t n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        n--;
    size_t b = n;
    while (b && out[b - 1] != '\n')
        b--;
    snprintf(buf, size, "%.*s", (int)(n - b), out + b);
}

void bench_peer_matmul(const char *path, const char *backend, vt_dtype wtype, int64_t m, int64_t n, int64_t k,
                       bench_peer_result *r)
{
    memset(r, 0, sizeof *r);
    const char *ty = bench_peer_type(wtype);
    if (!ty) {
        snprintf(r->error, sizeof r->error, "the peer has no type for %s", vt_dtype_name(wtype));
        return;
    }
    char filter[160];
    snprintf(filter, sizeof filter, "type_a=%s,type_b=f32,m=%lld,n=%lld,k=%lld,", ty, (long long)m, (long long)n,
             (long long)k);
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(r->error, sizeof r->error, "pipe: %s", strerror(errno));
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(r->error, sizeof r->error, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        char *argv[] = {(char *)path, "perf", "-b", (char *)backend, "-o", "MUL_MAT", "-p", filter, NULL};
        execv(path, argv);
        fprintf(stderr, "cannot run %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    char *out = malloc(OUT_MAX + 1);
    size_t used = 0;
    ssize_t got;
    char sink[4096];
    while ((got = read(fd[0], out && used < OUT_MAX ? out + used : sink,
                       out && used < OUT_MAX ? OUT_MAX - used : sizeof sink)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (out && used < OUT_MAX)
            used += (size_t)got;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!out) {
        snprintf(r->error, sizeof r->error, "out of host memory for the peer's output");
        return;
    }
    out[used] = '\0';
    if (bench_peer_parse(out, &r->runs, &r->us)) {
        r->ok = true;
    } else {
        char line[96];
        last_line(out, line, sizeof line);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            snprintf(r->error, sizeof r->error, "%s", line);
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            snprintf(r->error, sizeof r->error,
                     "the peer timed no case matching %.100s (its MUL_MAT perf cases are m=4096 k=14336 n=1-5,8,512)",
                     filter);
        else
            snprintf(r->error, sizeof r->error, "no \"N runs - T us/run\" line for %.100s (exit %d; last line: %.96s)",
                     filter, WIFEXITED(status) ? WEXITSTATUS(status) : -1, line);
    }
    free(out);
}
