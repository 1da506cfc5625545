/* The compile check (docs/port.md, "The compile check"): the user's HIP
 * sources compiled by the hipcc of a root for each AMD target, with a fixed
 * argument list (execve, no shell), -fsyntax-only, into a private temporary
 * directory; each compiler diagnostic on a user's file a finding (rule
 * "compile"), linked to the scan rule that explains the same line.
 *
 * How the root's compiler runs: hipcc is a Perl script that runs clang by
 * absolute path, so the root's loader alone (ld.so --library-path) is not
 * enough -- every program it starts would be the host's. A forked child
 * enters a private mount namespace (a user namespace first when not root),
 * binds the temporary directory onto ROOT/tmp and each source directory
 * below it, binds /dev and /proc where the root has real directories for
 * them, chroots into ROOT and execs the compiler. Nothing is written inside
 * the root: the binds exist only in the child's namespace. For root "/" the
 * compiler runs directly on the files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "port/hipcc.h"
#include "port/port.h"

#define CC_MAX_FILES 10000        /* sources per check */
#define CC_MAX_UNITS 64           /* source directories (binds) per check */
#define CC_BATCH 64               /* files per compiler run */
#define CC_MAX_OUTPUT (8u << 20)  /* compiler output kept per run */
#define CC_TIMEOUT_S 600          /* one compiler run */
#define CC_WALK_DEPTH 32

/* A directory the sources come from: host path, and the path the compiler
 * sees it at (the same for root "/", /tmp/sN inside a root). */
struct unit {
    char host[PATH_MAX];  /* resolved, for the bind */
    char given[PATH_MAX]; /* as the caller named it, for the findings */
    char seen[PATH_MAX];
};

struct source {
    char host[PATH_MAX]; /* the path as the user gave it or as walked */
    char seen[PATH_MAX];
    int unit;
};

struct check {
    const char *root;
    int chrooted;
    char compiler[PATH_MAX]; /* inside root */
    char tmp[PATH_MAX];      /* the private temporary directory (host) */
    int have_tmp;
    struct unit units[CC_MAX_UNITS];
    int n_units;
    struct source *src;
    size_t n_src, cap_src;
    json_t *found;  /* "file\nline\ncol\nseverity\nmessage" -> finding */
    json_t *findings;
    long runs, errors, warnings;
};

/* ---------- the compiler ---------- */

static const char *const compilers[] = {"/opt/rocm/bin/hipcc", "/usr/bin/hipcc",
                                        "/opt/rocm/llvm/bin/clang++"};

static int find_compiler(struct check *c, struct gv_err *err)
{
    for (size_t i = 0; i < sizeof compilers / sizeof compilers[0]; i++) {
        struct stat st;
        if (gv_root_stat(c->root, compilers[i], &st, 0) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mode & 0111)) {
            snprintf(c->compiler, sizeof c->compiler, "%s", compilers[i]);
            return GV_OK;
        }
    }
    return gv_err_set(err, GV_E_NOTFOUND,
                      "port check: no HIP compiler in %s (looked for /opt/rocm/bin/hipcc, "
                      "/usr/bin/hipcc, /opt/rocm/llvm/bin/clang++); install hipcc there",
                      c->root);
}

/* A target name safe to put in an argument: gfx90a, gfx90a:xnack-, gfx11-generic. */
static int amd_target(const char *t)
{
    return strncmp(t, "gfx", 3) == 0 && strlen(t) < 32 &&
           strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789:+-") == strlen(t);
}

/* ---------- the sources ---------- */

static int is_hip_source(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (strcmp(dot, ".hip") == 0 || strcmp(dot, ".cu") == 0);
}

static int add_source(struct check *c, const char *host, const char *rel, int unit,
                      struct gv_err *err)
{
    if (c->n_src == CC_MAX_FILES)
        return gv_err_set(err, GV_E_USAGE, "port check: more than %d sources", CC_MAX_FILES);
    if (c->n_src == c->cap_src) {
        size_t cap = c->cap_src ? c->cap_src * 2 : 64;
        struct source *s = realloc(c->src, cap * sizeof *s);
        if (!s)
            return gv_err_set(err, GV_E_NOMEM, "port check: out of memory");
        c->src = s;
        c->cap_src = cap;
    }
    struct source *s = &c->src[c->n_src];
    if (snprintf(s->host, sizeof s->host, "%s", host) >= (int)sizeof s->host ||
        snprintf(s->seen, sizeof s->seen, "%s/%s", c->units[unit].seen, rel) >=
            (int)sizeof s->seen)
        return gv_err_set(err, GV_E_USAGE, "port check: path too long: %s", host);
    s->unit = unit;
    c->n_src++;
    return GV_OK;
}

static int walk(struct check *c, const char *dir, const char *rel, int unit, int depth,
                struct gv_err *err)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort), rc = GV_OK;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char host[PATH_MAX], sub[PATH_MAX];
        struct stat st;
        if (!rc && strcmp(name, ".") && strcmp(name, "..") &&
            snprintf(host, sizeof host, "%s/%s", dir, name) < (int)sizeof host &&
            snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", name) < (int)sizeof sub &&
            lstat(host, &st) == 0) {
            if (S_ISDIR(st.st_mode) && depth < CC_WALK_DEPTH)
                rc = walk(c, host, sub, unit, depth + 1, err);
            else if (S_ISREG(st.st_mode) && is_hip_source(name))
                rc = add_source(c, host, sub, unit, err);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static int add_unit(struct check *c, const char *dir, struct gv_err *err)
{
    if (c->n_units == CC_MAX_UNITS)
        return gv_err_set(err, GV_E_USAGE, "port check: more than %d source directories",
                          CC_MAX_UNITS);
    struct unit *u = &c->units[c->n_units];
    if (!realpath(dir, u->host))
        return gv_err_set(err, GV_E_IO, "port check: %s: %s", dir, strerror(errno));
    snprintf(u->given, sizeof u->given, "%s", dir);
    if (c->chrooted)
        snprintf(u->seen, sizeof u->seen, "/tmp/s%d", c->n_units);
    else
        memcpy(u->seen, u->host, sizeof u->seen);
    return c->n_units++;
}

static int collect(struct check *c, const char *const *paths, size_t n, struct gv_err *err)
{
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (lstat(paths[i], &st) != 0)
            return gv_err_set(err, GV_E_IO, "port check: %s: %s", paths[i], strerror(errno));
        int rc;
        if (S_ISDIR(st.st_mode)) {
            int u = add_unit(c, paths[i], err);
            rc = u < 0 ? u : walk(c, paths[i], "", u, 0, err);
        } else if (S_ISREG(st.st_mode)) {
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%s", paths[i]);
            char *slash = strrchr(dir, '/');
            const char *base = slash ? slash + 1 : paths[i];
            if (!slash)
                snprintf(dir, sizeof dir, ".");
            else if (slash == dir)
                dir[1] = '\0';
            else
                *slash = '\0';
            int u = add_unit(c, dir, err);
            rc = u < 0 ? u : add_source(c, paths[i], base, u, err);
        } else {
            rc = gv_err_set(err, GV_E_USAGE, "port check: %s: not a file or directory "
                            "(links are not followed)", paths[i]);
        }
        if (rc)
            return rc;
    }
    return GV_OK;
}

/* ---------- running it ---------- */

struct launch {
    const struct check *c;
    char *argv[CC_BATCH + 16];
    char *envp[8];
    char dev[PATH_MAX], proc[PATH_MAX], tmp_in_root[PATH_MAX];
    char sub[CC_MAX_UNITS][PATH_MAX]; /* tmp/sN on the host */
    int userns, bind_dev, bind_proc;
    char uid_map[64], gid_map[64];
    int out;
};

static void child_fail(const char *what)
{
    int e = errno;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "gpuvet: port check: %s failed (%s)\n", what, strerror(e));
    if (n > 0 && write(2, msg, (size_t)n) < 0)
        _exit(126);
    _exit(126);
}

static void write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) < 0)
        child_fail(path);
    close(fd);
}

static void enter_root(const struct launch *l)
{
    const struct check *c = l->c;
    if (l->userns) {
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            child_fail("unshare(CLONE_NEWUSER|CLONE_NEWNS) (not root, and no unprivileged "
                       "user namespaces)");
        write_proc("/proc/self/setgroups", "deny");
        write_proc("/proc/self/uid_map", l->uid_map);
        write_proc("/proc/self/gid_map", l->gid_map);
    } else if (unshare(CLONE_NEWNS) != 0) {
        child_fail("unshare(CLONE_NEWNS)");
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        child_fail("making the mounts private");
    for (int i = 0; i < c->n_units; i++)
        if (mount(c->units[i].host, l->sub[i], NULL, MS_BIND | MS_REC, NULL) != 0)
            child_fail("binding a source directory");
    if (mount(c->tmp, l->tmp_in_root, NULL, MS_BIND | MS_REC, NULL) != 0)
        child_fail("binding the temporary directory onto the root's /tmp");
    if (l->bind_dev && mount("/dev", l->dev, NULL, MS_BIND | MS_REC, NULL) != 0)
        child_fail("binding /dev into the root");
    if (l->bind_proc && mount("/proc", l->proc, NULL, MS_BIND | MS_REC, NULL) != 0)
        child_fail("binding /proc into the root");
    if (chroot(c->root) != 0)
        child_fail("chroot");
    if (chdir("/tmp") != 0)
        child_fail("chdir /tmp");
}

static void child_main(const struct launch *l)
{
    if (dup2(l->out, 1) < 0 || dup2(l->out, 2) < 0)
        _exit(126);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul >= 0 && dup2(nul, 0) < 0)
        _exit(126);
    if (l->c->chrooted)
        enter_root(l);
    else if (chdir(l->c->tmp) != 0)
        child_fail("chdir to the temporary directory");
    execve(l->c->compiler, l->argv, l->envp);
    child_fail(l->c->compiler);
}

/* A directory of the root that is no link (a bind onto a link would land
 * wherever the link points, on the host). */
static int real_dir_in_root(const char *root, const char *path, char *host, size_t n)
{
    struct stat st;
    if (snprintf(host, n, "%s%s", root, path) >= (int)n)
        return 0;
    return lstat(host, &st) == 0 && S_ISDIR(st.st_mode);
}

static int plan_launch(struct launch *l, const struct check *c, struct gv_err *err)
{
    memset(l, 0, sizeof *l);
    l->c = c;
    static char path_var[] = "PATH=/opt/rocm/bin:/usr/local/bin:/usr/bin:/bin";
    static char platform[] = "HIP_PLATFORM=amd", lang[] = "LC_ALL=C";
    static char home_root[] = "HOME=/tmp", tmp_root[] = "TMPDIR=/tmp";
    static char home[PATH_MAX + 8], tmpdir[PATH_MAX + 8];
    snprintf(home, sizeof home, "HOME=%s", c->tmp);
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", c->tmp);
    char *env[] = {path_var, platform, lang, c->chrooted ? home_root : home,
                   c->chrooted ? tmp_root : tmpdir, NULL};
    memcpy(l->envp, env, sizeof env);
    if (!c->chrooted)
        return GV_OK;
    if (!real_dir_in_root(c->root, "/tmp", l->tmp_in_root, sizeof l->tmp_in_root))
        return gv_err_set(err, GV_E_NOTFOUND, "port check: %s/tmp is not a directory (a "
                          "link or missing): nowhere to put the sources", c->root);
    l->bind_dev = real_dir_in_root(c->root, "/dev", l->dev, sizeof l->dev);
    l->bind_proc = real_dir_in_root(c->root, "/proc", l->proc, sizeof l->proc);
    for (int i = 0; i < c->n_units; i++) {
        snprintf(l->sub[i], sizeof l->sub[i], "%s/s%d", c->tmp, i);
        if (mkdir(l->sub[i], 0700) != 0 && errno != EEXIST)
            return gv_err_set(err, GV_E_IO, "port check: mkdir %s: %s", l->sub[i],
                              strerror(errno));
    }
    l->userns = geteuid() != 0;
    snprintf(l->uid_map, sizeof l->uid_map, "0 %u 1", (unsigned)geteuid());
    snprintf(l->gid_map, sizeof l->gid_map, "0 %u 1", (unsigned)getegid());
    return GV_OK;
}

/* Reads the child's output until it closes it, at most CC_TIMEOUT_S. */
static int read_output(int fd, pid_t pid, char **out, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    time_t end = time(NULL) + CC_TIMEOUT_S;
    int timed_out = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        long left = (long)(end - time(NULL));
        if (left <= 0 || poll(&p, 1, (int)(left * 1000)) == 0) {
            timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        char chunk[65536];
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (buf && n + (size_t)r <= CC_MAX_OUTPUT) {
            if (n + (size_t)r > cap) {
                char *b = realloc(buf, (cap = (n + (size_t)r) * 2) + 1);
                if (!b) {
                    free(buf);
                    buf = NULL;
                    continue;
                }
                buf = b;
            }
            memcpy(buf + n, chunk, (size_t)r);
            n += (size_t)r;
        }
    }
    if (buf)
        buf[n] = '\0';
    *out = buf;
    *len = n;
    return timed_out;
}

/* Runs the compiler on files [from, to) for target; its output in *out. */
static int run_compiler(struct check *c, const char *target, size_t from, size_t to, char **out,
                        int *status, struct gv_err *err)
{
    struct launch l;
    int rc = plan_launch(&l, c, err);
    if (rc)
        return rc;
    char arch[64];
    snprintf(arch, sizeof arch, "--offload-arch=%s", target);
    static char x[] = "-x", hip[] = "hip", syntax[] = "-fsyntax-only",
                color[] = "-fno-color-diagnostics", caret[] = "-fno-caret-diagnostics",
                shorten[] = "-Wshorten-64-to-32", sync[] = "-DHIP_ENABLE_WARP_SYNC_BUILTINS";
    int a = 0;
    l.argv[a++] = c->compiler;
    l.argv[a++] = x;
    l.argv[a++] = hip;
    l.argv[a++] = arch;
    l.argv[a++] = syntax;
    l.argv[a++] = color;
    l.argv[a++] = caret;
    l.argv[a++] = shorten;
    l.argv[a++] = sync;
    for (size_t i = from; i < to; i++)
        l.argv[a++] = c->src[i].seen;
    l.argv[a] = NULL;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return gv_err_set(err, GV_E_IO, "port check: pipe: %s", strerror(errno));
    l.out = pipefd[1];
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return gv_err_set(err, GV_E_IO, "port check: fork: %s", strerror(errno));
    }
    if (pid == 0)
        child_main(&l);
    close(pipefd[1]);
    size_t len;
    int timed_out = read_output(pipefd[0], pid, out, &len);
    close(pipefd[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    c->runs++;
    if (!*out)
        return gv_err_set(err, GV_E_NOMEM, "port check: out of memory");
    if (timed_out)
        return gv_err_set(err, GV_E_TIMEOUT, "port check: %s --offload-arch=%s ran over %d s",
                          c->compiler, target, CC_TIMEOUT_S);
    return GV_OK;
}

/* ---------- the diagnostics ---------- */

/* The host path of a file the compiler names, when it lies in one of the
 * source directories (a source or a header beside it); 0 when not. */
static int host_path_of(const struct check *c, const char *seen, char *out, size_t outsz)
{
    for (int i = 0; i < c->n_units; i++) {
        size_t n = strlen(c->units[i].seen);
        if (strncmp(seen, c->units[i].seen, n) == 0 && seen[n] == '/')
            return snprintf(out, outsz, "%s%s", c->units[i].given, seen + n) < (int)outsz;
    }
    return 0;
}

int gv_port_split_diagnostic(char *line, struct gv_port_diag *d)
{
    static const char *const kinds[] = {"fatal error", "error", "warning", "note"};
    static const char *const severity[] = {"error", "error", "warning", "note"};
    for (size_t k = 0; k < 4; k++) {
        char pat[32];
        snprintf(pat, sizeof pat, ": %s: ", kinds[k]);
        char *at = strstr(line, pat);
        if (!at)
            continue;
        char *c2 = at, *c1 = at;
        while (c2 > line && c2[-1] != ':') /* ":COL" before ": error: " */
            c2--;
        if (c2 == line || c2 == at)
            return -1;
        c1 = c2 - 1;
        while (c1 > line && c1[-1] != ':') /* ":LINE" before it */
            c1--;
        if (c1 == line || c1 == c2 - 1 || c1 - 1 == line)
            return -1;
        if (strspn(c1, "0123456789") != (size_t)(c2 - 1 - c1) ||
            strspn(c2, "0123456789") != (size_t)(at - c2) || c2 - 1 - c1 > 9 || at - c2 > 9)
            return -1;
        *at = '\0';
        c2[-1] = '\0';
        c1[-1] = '\0';
        d->file = line;
        d->line = strtol(c1, NULL, 10);
        d->column = strtol(c2, NULL, 10);
        d->severity = severity[k];
        d->message = at + strlen(pat);
        if (d->line <= 0 || d->column <= 0)
            return -1;
        return 0;
    }
    return -1;
}

static void add_target(json_t *f, const char *target)
{
    json_t *targets = json_object_get(f, "targets");
    size_t i;
    json_t *v;
    json_array_foreach(targets, i, v)
        if (strcmp(json_string_value(v), target) == 0)
            return;
    json_array_append_new(targets, json_string(target));
}

static void add_diagnostic(struct check *c, const char *target, const char *file, long ln,
                           long col, const char *sev, const char *msg)
{
    char key[PATH_MAX + 1200];
    snprintf(key, sizeof key, "%s\n%ld\n%ld\n%s\n%.1000s", file, ln, col, sev, msg);
    json_t *f = json_object_get(c->found, key);
    if (f) {
        add_target(f, target);
        return;
    }
    char why[PATH_MAX + 160], source[PATH_MAX + 64];
    snprintf(why, sizeof why, "%s -fsyntax-only reports it for the targets listed (no GPU "
             "needed: the compiler alone)", c->compiler);
    snprintf(source, sizeof source, "the compiler: %s%s", c->chrooted ? c->root : "",
             c->compiler);
    f = gv_port_finding(file, ln, col, "compile", sev, msg, why, source,
                        "change the line as the compiler's message says");
    if (!f)
        return;
    json_object_set_new(f, "targets", json_pack("[s]", target));
    json_object_set(c->found, key, f);
    json_array_append_new(c->findings, f);
    if (strcmp(sev, "error") == 0)
        c->errors++;
    else
        c->warnings++;
}

/* clang's output for one run. An error inside a header of the root (a
 * static_assert in HIP's warp functions, say) is put on the user's line its
 * "in instantiation of ... requested here" note names, with the header's
 * place in the message; one no note leads back from is dropped. Returns the
 * errors put on user's files. */
static int parse_output(struct check *c, const char *target, char *text)
{
    int seen = 0;
    char pending[1200] = "";
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        struct gv_port_diag d;
        char host[PATH_MAX];
        if (gv_port_split_diagnostic(line, &d) != 0)
            continue;
        int mine = host_path_of(c, d.file, host, sizeof host);
        if (strcmp(d.severity, "note") == 0) {
            if (mine && pending[0]) {
                add_diagnostic(c, target, host, d.line, d.column, "error", pending);
                seen++;
                pending[0] = '\0';
            }
            continue;
        }
        pending[0] = '\0';
        if (mine) {
            seen += strcmp(d.severity, "error") == 0;
            add_diagnostic(c, target, host, d.line, d.column, d.severity, d.message);
        } else if (strcmp(d.severity, "error") == 0) {
            snprintf(pending, sizeof pending, "%.900s (in %.200s:%ld, instantiated here)",
                     d.message, d.file, d.line);
        }
    }
    return seen;
}

/* A run that failed without an error line on a user's file (a crash, a
 * missing tool, an error in a header only): one finding on its first file. */
static void add_run_failure(struct check *c, const char *target, size_t from, int status,
                            const char *text)
{
    char msg[1024], last[600] = "";
    const char *end = text + strlen(text);
    while (end > text && end[-1] == '\n')
        end--;
    const char *start = end;
    while (start > text && start[-1] != '\n')
        start--;
    snprintf(last, sizeof last, "%.*s", (int)(end - start), start);
    snprintf(msg, sizeof msg, "%s --offload-arch=%s %s %d; its last line: %s", c->compiler,
             target, WIFEXITED(status) ? "exited" : "was killed by signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), last);
    add_diagnostic(c, target, c->src[from].host, 1, 1, "error", msg);
}

/* ---------- links to the scan ---------- */

static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb))
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0;
}

/* Each compile finding with the scan's findings on its line: their rule ids in
 * "scan_rules", the first one's why, source and fix. */
static void link_scan(struct check *c, json_t *scanned)
{
    size_t i, k;
    json_t *f, *s;
    json_array_foreach(c->findings, i, f) {
        json_t *rules = NULL;
        const char *file = json_string_value(json_object_get(f, "file"));
        json_int_t line = json_integer_value(json_object_get(f, "line"));
        json_array_foreach(scanned, k, s) {
            const char *sf = json_string_value(json_object_get(s, "file"));
            if (json_integer_value(json_object_get(s, "line")) != line || !sf || !file ||
                !same_file(sf, file))
                continue;
            if (!rules) {
                rules = json_array();
                json_object_set(f, "why", json_object_get(s, "why"));
                json_object_set(f, "source", json_object_get(s, "source"));
                json_object_set(f, "fix", json_object_get(s, "fix"));
            }
            json_array_append(rules, json_object_get(s, "rule"));
        }
        if (rules)
            json_object_set_new(f, "scan_rules", rules);
    }
}

/* ---------- the check ---------- */

static void remove_tree(const char *dir)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, NULL);
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX];
        struct stat st;
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..") &&
            snprintf(p, sizeof p, "%s/%s", dir, names[i]->d_name) < (int)sizeof p &&
            lstat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                remove_tree(p);
            else
                unlink(p);
        }
        free(names[i]);
    }
    free(names);
    rmdir(dir);
}

static int compile_all(struct check *c, const struct gv_port_targets *t, struct gv_err *err)
{
    for (size_t ti = 0; ti < t->n; ti++) {
        const char *target = t->names[ti];
        if (!amd_target(target))
            continue;
        for (size_t from = 0; from < c->n_src; from += CC_BATCH) {
            size_t to = from + CC_BATCH < c->n_src ? from + CC_BATCH : c->n_src;
            char *out = NULL;
            int status = 0;
            int rc = run_compiler(c, target, from, to, &out, &status, err);
            if (!rc) {
                int errors = parse_output(c, target, out);
                int failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
                if (failed && WIFEXITED(status) && WEXITSTATUS(status) == 126)
                    rc = gv_err_set(err, GV_E_IO, "port check: running %s in %s: %.600s",
                                    c->compiler, c->root, out);
                else if (failed && !errors)
                    add_run_failure(c, target, from, status, out);
            }
            free(out);
            if (rc)
                return rc;
        }
    }
    return GV_OK;
}

static void set_stats(const struct check *c, json_t *stats)
{
    if (!stats)
        return;
    json_object_set_new(stats, "compile_files", json_integer((json_int_t)c->n_src));
    json_object_set_new(stats, "compile_runs", json_integer(c->runs));
    json_object_set_new(stats, "compile_errors", json_integer(c->errors));
    json_object_set_new(stats, "compile_warnings", json_integer(c->warnings));
    json_object_set_new(stats, "compiler", json_string(c->compiler));
}

int gv_port_compile(const char *root, const char *const *paths, size_t n,
                    const struct gv_port_targets *t, json_t *findings, json_t *stats,
                    struct gv_err *err)
{
    if (!root || !t || !json_is_array(findings) || (n && !paths))
        return gv_err_set(err, GV_E_USAGE, "port check: root, targets and findings needed");
    struct check *c = calloc(1, sizeof *c);
    if (!c)
        return gv_err_set(err, GV_E_NOMEM, "port check: out of memory");
    c->root = root;
    c->chrooted = strcmp(root, "/") != 0;
    c->findings = json_array();
    c->found = json_object();
    snprintf(c->tmp, sizeof c->tmp, "/tmp/gpuvet-port.XXXXXX");
    int rc = find_compiler(c, err);
    if (!rc)
        rc = collect(c, paths, n, err);
    if (!rc && c->n_src) {
        c->have_tmp = mkdtemp(c->tmp) != NULL;
        rc = c->have_tmp ? compile_all(c, t, err)
                         : gv_err_set(err, GV_E_IO, "port check: mkdtemp %s: %s", c->tmp,
                                      strerror(errno));
    }
    if (c->have_tmp)
        remove_tree(c->tmp);
    if (!rc) {
        json_t *scanned = json_array();
        struct gv_err serr = {0};
        if (scanned && gv_port_scan(paths, n, t, scanned, NULL, &serr) == GV_OK)
            link_scan(c, scanned);
        json_decref(scanned);
        json_array_extend(findings, c->findings);
    }
    set_stats(c, stats);
    json_decref(c->findings);
    json_decref(c->found);
    free(c->src);
    free(c);
    return rc;
}
