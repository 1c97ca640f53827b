/* plugin_trust.c - may this plugin file (or plugin directory) be loaded:
 * the rule a secure loader applies (OpenSSH's safe_path, sudo's plugin
 * checks), after resolving every symbolic link.
 *
 * Walking the path from / one component at a time, every directory
 * reached, the final file or directory and every symbolic link followed
 * must be owned by root or by this process's effective user; no directory
 * and no file may be writable by another user:
 *   - group write is refused unless the group is root's (gid 0);
 *   - world write is refused, except on an ancestor directory that is
 *     sticky and owned by root (/tmp): there no other user can rename or
 *     remove the entry below it, which this walk checks in turn. The plugin
 *     directory itself is never accepted writable by others, sticky or not
 *     (anyone could add a vt_<name>.so to it);
 *   - a path through procfs is refused: /proc/self/cwd and its kin name a
 *     different directory in every process (the current directory is never
 *     searched, SPEC 3).
 * ACLs are not read. A file that passes cannot be replaced by another
 * non-root user between this check and the dlopen, since every directory
 * on its path is writable by root and this user only. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "vt_internal.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* Symbolic links followed before the walk gives up (as the kernel, ELOOP). */
#define TRUST_MAX_LINKS 40

/* Who may own what the walk meets. */
static bool trusted_owner(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

/* The ownership and write-permission rule for one object; is_target says
 * it is the file or directory asked about (not an ancestor). NULL or a
 * reason naming what and why. */
static char *object_problem(const char *path, const struct stat *st, bool is_target)
{
    const char *kind = S_ISDIR(st->st_mode) ? "directory" : S_ISLNK(st->st_mode) ? "symbolic link" : "file";
    unsigned mode = (unsigned)(st->st_mode & 07777);
    if (!trusted_owner(st->st_uid))
        return vt_strdup_printf("%s %s is owned by uid %u, not by root or this process's user (uid %u)", kind, path,
                                (unsigned)st->st_uid, (unsigned)geteuid());
    if (S_ISLNK(st->st_mode))
        return NULL; /* a link's own mode bits mean nothing */
    bool sticky_root = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && st->st_uid == 0 && !is_target;
    if ((st->st_mode & S_IWOTH) && !sticky_root)
        return vt_strdup_printf("%s %s is world-writable (mode %04o)%s", kind, path, mode,
                                S_ISDIR(st->st_mode) && is_target && (st->st_mode & S_ISVTX)
                                    ? ": a sticky directory still lets anyone add a plugin to it"
                                    : "");
    if ((st->st_mode & S_IWGRP) && st->st_gid != 0 && !sticky_root)
        return vt_strdup_printf("%s %s is writable by group %u (mode %04o), which other users may be in", kind, path,
                                (unsigned)st->st_gid, mode);
    return NULL;
}

/* Refuse a directory on procfs. */
static char *procfs_problem(const char *dir)
{
    struct statfs fs;
    if (statfs(dir, &fs) == 0 && (unsigned long)fs.f_type == PROC_SUPER_MAGIC)
        return vt_strdup_printf("%s is on procfs, whose paths (/proc/self/cwd, /proc/self/root) name a different "
                                "directory in each process",
                                dir);
    return NULL;
}

/* Append component comp to the resolved prefix cur (a PATH_MAX buffer). */
static bool path_join(char *cur, const char *comp, size_t len)
{
    size_t have = strlen(cur);
    size_t sep = have > 1 ? 1 : 0; /* "/" + "a" -> "/a", "/a" + "b" -> "/a/b" */
    if (have + sep + len + 1 > PATH_MAX)
        return false;
    if (sep)
        cur[have++] = '/';
    memcpy(cur + have, comp, len);
    cur[have + len] = '\0';
    return true;
}

char *vt_plugin_trust_problem(const char *path, bool want_dir)
{
    if (!path || path[0] != '/')
        return vt_strdup_printf("'%s' is not an absolute path", path ? path : "(null)");
    /* rest: what is left to resolve; cur: the resolved, checked prefix. */
    char *rest = malloc(PATH_MAX), *cur = malloc(PATH_MAX), *link = malloc(PATH_MAX);
    char *bad = NULL;
    if (!rest || !cur || !link) {
        bad = vt_strdup("out of memory checking the plugin path");
        goto out;
    }
    if (strlen(path) >= PATH_MAX) {
        bad = vt_strdup_printf("path of %zu bytes is longer than PATH_MAX", strlen(path));
        goto out;
    }
    strcpy(rest, path);
    strcpy(cur, "/");
    struct stat st;
    if (lstat("/", &st) != 0) {
        bad = vt_strdup_printf("cannot stat /: %s", strerror(errno));
        goto out;
    }
    if ((bad = object_problem("/", &st, false)))
        goto out;
    int links = 0;
    const char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *after = p + len;
        while (*after == '/')
            after++;
        bool last = *after == '\0';
        if (len == 1 && p[0] == '.') {
            p = after;
            continue;
        }
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            char *slash = strrchr(cur, '/'); /* cur is resolved: its parent is lexical */
            if (slash == cur)
                cur[1] = '\0';
            else if (slash)
                *slash = '\0';
            p = after;
            if (last)
                break;
            continue;
        }
        size_t cur_len = strlen(cur);
        if (!path_join(cur, p, len)) {
            bad = vt_strdup_printf("path under %s is longer than PATH_MAX", path);
            goto out;
        }
        if (lstat(cur, &st) != 0) {
            bad = vt_strdup_printf("cannot stat %s: %s", cur, strerror(errno));
            goto out;
        }
        if (S_ISLNK(st.st_mode)) {
            if ((bad = object_problem(cur, &st, false)))
                goto out;
            if (++links > TRUST_MAX_LINKS) {
                bad = vt_strdup_printf("more than %d symbolic links on the way to %s", TRUST_MAX_LINKS, path);
                goto out;
            }
            ssize_t n = readlink(cur, link, PATH_MAX - 1);
            if (n <= 0) {
                bad = vt_strdup_printf("cannot read symbolic link %s: %s", cur, n < 0 ? strerror(errno) : "empty");
                goto out;
            }
            link[n] = '\0';
            /* The link's target, then what followed the link. */
            size_t tail = strlen(after);
            if ((size_t)n + 1 + tail + 1 > PATH_MAX) {
                bad = vt_strdup_printf("symbolic link %s leads to a path longer than PATH_MAX", cur);
                goto out;
            }
            char *next = malloc(PATH_MAX);
            if (!next) {
                bad = vt_strdup("out of memory checking the plugin path");
                goto out;
            }
            snprintf(next, PATH_MAX, "%s%s%s", link, tail ? "/" : "", after);
            strcpy(rest, next);
            free(next);
            p = rest;
            if (link[0] == '/')
                strcpy(cur, "/");
            else
                cur[cur_len > 1 ? cur_len : 1] = '\0'; /* back to the link's directory */
            continue;
        }
        if (!last && !S_ISDIR(st.st_mode)) {
            bad = vt_strdup_printf("%s is not a directory", cur);
            goto out;
        }
        if (last) {
            if (want_dir && !S_ISDIR(st.st_mode)) {
                bad = vt_strdup_printf("%s is not a directory", cur);
                goto out;
            }
            if (!want_dir && !S_ISREG(st.st_mode)) {
                bad = vt_strdup_printf("%s is not a regular file (mode %06o)", cur, (unsigned)st.st_mode);
                goto out;
            }
        }
        if ((bad = object_problem(cur, &st, last)))
            goto out;
        if (S_ISDIR(st.st_mode) && (bad = procfs_problem(cur)))
            goto out;
        p = after;
    }
    /* A path that resolved to / itself (or ended in ".."): check it as the target. */
    if (lstat(cur, &st) != 0) {
        bad = vt_strdup_printf("cannot stat %s: %s", cur, strerror(errno));
        goto out;
    }
    if (want_dir != S_ISDIR(st.st_mode))
        bad = vt_strdup_printf("%s is not a %s", cur, want_dir ? "directory" : "regular file");
    else if (!(bad = object_problem(cur, &st, true)) && want_dir)
        bad = procfs_problem(cur);
out:
    free(rest);
    free(cur);
    free(link);
    return bad;
}
