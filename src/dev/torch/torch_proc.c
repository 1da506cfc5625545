/* The PyTorch worker process (see torch_proc.h). */
#include "dev/torch/torch_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dev/ipc.h"
#include "dev/kernel_sources.h"
#include "base/fs.h"
#include "base/json.h"

extern char **environ;

#define FD_VAR "GPUVET_FD"
/* Running inside an image (docs/image.md, "Running inside an image"): the file of
 * the image's Env, and the host driver's libraries to bind into the root. */
#define ENV_FILE_VAR "GPUVET_PYTHON_ENV_FILE"
#define HOST_DRIVER_VAR "GPUVET_PYTHON_HOST_DRIVER"
#define HOST_DRIVER_DIR "/.gpuvet/host-driver"
#define MAX_HEADER (16u << 20)
#define WORKER_MODULE "gpuvet_torch_worker" /* python/gpuvet_torch_worker.py: main() serves */
/* python/native/_gpuvet_capture_record.c, as python/gpuvet_capture_native.py asks for it */
#define CAPTURE_RECORD_SO "_gpuvet_capture_record.so"

/* Run with `python -c`: reads the worker's files from the socket (a count, then
 * for each a name and its bytes, lengths little-endian) into memory and installs
 * an importer of them (a meta path finder and loader over name -> source), so
 * that the worker and the modules it imports are imported by name, each into a
 * module of its own, and nothing is written to disk. A file not named *.py (the
 * capture's recorder in C, a shared object) is handed to the worker as bytes. */
static const char boot[] =
    "import importlib.abc, importlib.util, os, sys\n"
    "fd = int(os.environ.pop('" FD_VAR "'))\n"
    "def rd(n):\n"
    "    b = bytearray()\n"
    "    while len(b) < n:\n"
    "        c = os.read(fd, n - len(b))\n"
    "        if not c:\n"
    "            raise SystemExit('gpuvet: the worker script did not arrive')\n"
    "        b += c\n"
    "    return bytes(b)\n"
    "class Sent(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
    "    def __init__(self):\n"
    "        self.src, self.blobs = {}, {}\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name in self.src:\n"
    "            return importlib.util.spec_from_loader(name, self, origin=name + '.py')\n"
    "    def exec_module(self, m):\n"
    "        exec(compile(self.src[m.__name__], m.__spec__.origin, 'exec'), m.__dict__)\n"
    "sent = Sent()\n"
    "for _ in range(int.from_bytes(rd(4), 'little')):\n"
    "    name = rd(int.from_bytes(rd(4), 'little')).decode('utf-8')\n"
    "    data = rd(int.from_bytes(rd(8), 'little'))\n"
    "    if name.endswith('.py'):\n"
    "        sent.src[name[:-3]] = data.decode('utf-8')\n"
    "    else:\n"
    "        sent.blobs[name] = data\n"
    "sys.meta_path.insert(0, sent)\n"
    "import " WORKER_MODULE "\n"
    WORKER_MODULE ".main(fd, sent.blobs)\n";

/* Run before the boot code for bisect's referee (python -I -S): the
 * interpreter's own site-packages (of its prefix, a venv's with its base when
 * its pyvenv.cfg includes the system's, and the user's) appended to sys.path as
 * plain directories: their .pth files, sitecustomize and usercustomize are not
 * run. */
static const char boot_site[] =
    "import os, site, sys\n"
    "def _gv_site_dirs():\n"
    "    pre, exe = [sys.prefix], os.path.dirname(os.path.abspath(sys.executable))\n"
    "    for cfg in (os.path.join(exe, 'pyvenv.cfg'), os.path.join(os.path.dirname(exe), 'pyvenv.cfg')):\n"
    "        if os.path.isfile(cfg):\n"
    "            conf = dict((k.strip().lower(), v.strip().lower()) for k, _, v in\n"
    "                        (l.partition('=') for l in open(cfg, encoding='utf-8', errors='replace')))\n"
    "            pre = [os.path.dirname(cfg)]\n"
    "            if conf.get('include-system-site-packages') == 'true':\n"
    "                pre.append(sys.base_prefix)\n"
    "            break\n"
    "    v, out = 'python%d.%d' % sys.version_info[:2], []\n"
    "    for p in pre:\n" /* Debian's site.getsitepackages names only dist-packages */
    "        out += [os.path.join(p, 'lib', v, 'site-packages'),\n"
    "                os.path.join(p, 'lib64', v, 'site-packages')]\n"
    "    return out + site.getsitepackages(pre) + [site.getusersitepackages()]\n"
    "for _d in _gv_site_dirs():\n"
    "    if os.path.isdir(_d) and _d not in sys.path:\n"
    "        sys.path.append(_d)\n";

/* Append to buf at *at (buf NULL: only count): v as k bytes little-endian; n bytes. */
static void put_le(unsigned char *buf, size_t *at, uint64_t v, int k)
{
    for (int b = 0; buf && b < k; b++)
        buf[*at + b] = (unsigned char)(v >> (8 * b));
    *at += (size_t)k;
}

static void put_bytes(unsigned char *buf, size_t *at, const void *data, size_t n)
{
    if (buf)
        memcpy(buf + *at, data, n);
    *at += n;
}

/* One file as the boot code reads it: name length (4 bytes), name, size (8), bytes. */
static void put_file(unsigned char *buf, size_t *at, const char *name, const void *data,
                     size_t size)
{
    put_le(buf, at, strlen(name), 4);
    put_bytes(buf, at, name, strlen(name));
    put_le(buf, at, size, 8);
    put_bytes(buf, at, data, size);
}

/* The count, the recorder in C where this gpuvet has it, then the embedded Python
 * files; into buf (NULL: only counted), *at bytes. */
static void put_scripts(unsigned char *buf, size_t *at)
{
    int n = gv_python_sources_count, native = gv_python_capture_record_size > 0;
    put_le(buf, at, (uint64_t)(n + native), 4);
    if (native)
        put_file(buf, at, CAPTURE_RECORD_SO, gv_python_capture_record,
                 gv_python_capture_record_size);
    for (int i = 0; i < n; i++)
        put_file(buf, at, gv_python_sources[i].name, gv_python_sources[i].text,
                 strlen(gv_python_sources[i].text));
}

/* The worker's files, in one write (a write per part would queue a buffer of the
 * socket's per part, and fill it before the worker reads). */
static int send_scripts(int fd)
{
    size_t total = 0, at = 0;
    put_scripts(NULL, &total);
    unsigned char *buf = malloc(total);
    if (!buf)
        return -1;
    put_scripts(buf, &at);
    int rc = gv_ipc_send_all(fd, buf, total);
    free(buf);
    return rc;
}

/* ---------- launching ---------- */

/* Everything the child needs, computed before fork: after fork it only makes
 * system calls (the parent may have other threads). */
#define MAX_BINDS 16 /* /proc, /sys, /dev and the host driver's libraries */
struct bind {
    char src[PATH_MAX], dst[PATH_MAX]; /* host paths: dst inside root */
};
struct launch {
    char exe[PATH_MAX];          /* path to execute, inside root when root[0] */
    char root[PATH_MAX];
    struct bind binds[MAX_BINDS];
    int nbinds;
    int host_driver;             /* binds under HOST_DRIVER_DIR: prepend it to LD_LIBRARY_PATH */
    int userns;                  /* not root: a user namespace first */
    char uid_map[64], gid_map[64];
    char *argv[6];
    char **envp;
    int sock, out;
};

/* Writes "gpuvet: WHAT failed (errno N)" to the output file and exits 126. */
static void child_fail(const char *what)
{
    int e = errno;
    char num[16];
    int k = (int)sizeof num;
    num[--k] = '\0';
    do {
        num[--k] = (char)('0' + e % 10);
        e /= 10;
    } while (e && k > 0);
    const char *parts[] = {"gpuvet: ", what, " failed (errno ", num + k, ")\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0)
            break;
    _exit(126);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) < 0)
        child_fail(path);
    close(fd);
}

static void enter_root(const struct launch *l)
{
    if (l->userns) {
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            child_fail("--python-root: unshare(CLONE_NEWUSER|CLONE_NEWNS) (not root, and no "
                       "unprivileged user namespaces)");
        write_file("/proc/self/setgroups", "deny");
        write_file("/proc/self/uid_map", l->uid_map);
        write_file("/proc/self/gid_map", l->gid_map);
    } else if (unshare(CLONE_NEWNS) != 0) {
        child_fail("--python-root: unshare(CLONE_NEWNS)");
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        child_fail("--python-root: making the mounts private");
    for (int i = 0; i < l->nbinds; i++)
        if (mount(l->binds[i].src, l->binds[i].dst, NULL, MS_BIND | MS_REC, NULL) != 0)
            child_fail("--python-root: bind-mounting /proc, /sys, /dev or the host driver "
                       "into the root");
    if (chroot(l->root) != 0)
        child_fail("--python-root: chroot");
    if (chdir("/") != 0)
        child_fail("--python-root: chdir /");
}

static void child_main(const struct launch *l)
{
    if (dup2(l->out, 1) < 0 || dup2(l->out, 2) < 0)
        _exit(126);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul >= 0 && dup2(nul, 0) < 0)
        _exit(126);
    if (fcntl(l->sock, F_SETFD, 0) != 0) /* the one descriptor the worker keeps */
        child_fail("fcntl");
    if (l->root[0])
        enter_root(l);
    execve(l->exe, l->argv, l->envp);
    child_fail(l->exe);
}

/* Finds name in dirs (colon-separated) as seen under root; writes the path as
 * the child will execute it. 0 when found. */
static int search_path(const char *root, const char *dirs, const char *name, char *out,
                       size_t n)
{
    const char *p = dirs;
    while (p && *p) {
        size_t len = strcspn(p, ":");
        char cand[PATH_MAX], host[PATH_MAX];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, name);
        snprintf(host, sizeof host, "%s%s", root, cand);
        struct stat st;
        if (cand[0] == '/' && lstat(host, &st) == 0 && (S_ISLNK(st.st_mode) ||
                                                        (S_ISREG(st.st_mode) && (st.st_mode & 0111)))) {
            snprintf(out, n, "%s", cand);
            return 0;
        }
        p += len;
        if (*p == ':')
            p++;
    }
    return -1;
}

/* Whether kv sets the variable name (NAME=...). */
static int sets(const char *kv, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(kv, name, n) && kv[n] == '=';
}

/* The PATH an image's Env sets (ENV_FILE_VAR's file), into out; "" when none.
 * Its directories are looked up under the root only: the interpreter the image's
 * own `python3` would start (conda's /opt/conda/bin, a venv's bin). */
static void image_path(char *out, size_t n)
{
    out[0] = '\0';
    const char *file = getenv(ENV_FILE_VAR);
    char *img = NULL;
    size_t len = 0;
    struct gv_err e = {0};
    if (!file || !*file || gv_read_file(file, 1u << 20, &img, &len, &e) != GV_OK)
        return;
    for (size_t at = 0; at < len; at += strlen(img + at) + 1)
        if (sets(img + at, "PATH"))
            snprintf(out, n, "%s", img + at + 5);
    free(img);
}

static int resolve_python(struct launch *l, const char *python, struct gv_err *err)
{
    const char *root = l->root;
    if (strchr(python, '/')) {
        char host[PATH_MAX];
        snprintf(l->exe, sizeof l->exe, "%s", python);
        snprintf(host, sizeof host, "%s%s", root, python);
        struct stat st;
        if (lstat(host, &st) != 0)
            return gv_err_set(err, GV_E_NOTFOUND, "interpreter %s%s%s: %s", python,
                              root[0] ? " in " : "", root, strerror(errno));
        if (!root[0] && access(python, X_OK) != 0)
            return gv_err_set(err, GV_E_NOTFOUND, "interpreter %s: not executable (%s)", python,
                              strerror(errno));
        return GV_OK;
    }
    char env_path[4096];
    image_path(env_path, sizeof env_path);
    const char *dirs = !root[0] ? getenv("PATH")
                       : env_path[0] ? env_path : "/usr/local/bin:/usr/bin:/bin";
    if (search_path(root, dirs ? dirs : "/usr/bin:/bin", python, l->exe, sizeof l->exe) != 0)
        return gv_err_set(err, GV_E_NOTFOUND, "no interpreter '%s' in %s%s%s (choose one with "
                          "--python PATH)", python, root[0] ? "the PATH of " : "PATH",
                          root[0] ? root : "", root[0] ? "" : "");
    return GV_OK;
}

static void add_bind(struct launch *l, const char *src, const char *dst)
{
    snprintf(l->binds[l->nbinds].src, sizeof l->binds[0].src, "%s", src);
    snprintf(l->binds[l->nbinds++].dst, sizeof l->binds[0].dst, "%s", dst);
}

/* A directory of the root that is no link (the root's own /.gpuvet is gpuvet's). */
static int real_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The host's driver libraries (HOST_DRIVER_VAR: host paths, colon-separated), each
 * bound onto its empty placeholder HOST_DRIVER_DIR/NAME in the root, which gpuvet
 * made when it unpacked the image; a missing placeholder or a link there is an
 * error (the bind would land elsewhere). */
static int plan_host_driver(struct launch *l, const char *libs, struct gv_err *err)
{
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/.gpuvet", l->root);
    for (const char *p = libs; p && *p;) {
        size_t len = strcspn(p, ":");
        char src[PATH_MAX], dst[PATH_MAX * 2];
        snprintf(src, sizeof src, "%.*s", (int)len, p);
        p += len + (p[len] == ':');
        const char *name = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
        snprintf(dst, sizeof dst, "%s" HOST_DRIVER_DIR "/%s", l->root, name);
        struct stat st;
        if (!src[0])
            continue;
        if (stat(src, &st) != 0 || !S_ISREG(st.st_mode))
            return gv_err_set(err, GV_E_NOTFOUND, "host driver library %s: not a file", src);
        if (l->nbinds == MAX_BINDS || !real_dir(dir) || !real_dir(strcat(dir, "/host-driver")) ||
            lstat(dst, &st) != 0 || !S_ISREG(st.st_mode))
            return gv_err_set(err, GV_E_NOTFOUND, "%s: no placeholder to bind the host's %s "
                              "onto (only gpuvet's unpacked images have one)", dst, src);
        snprintf(dir, sizeof dir, "%s/.gpuvet", l->root);
        add_bind(l, src, dst);
        l->host_driver = 1;
    }
    return GV_OK;
}

static int plan_root(struct launch *l, const char *root, struct gv_err *err)
{
    if (!root || !*root)
        return GV_OK;
    if (!realpath(root, l->root))
        return gv_err_set(err, GV_E_NOTFOUND, "--python-root %s: %s", root, strerror(errno));
    struct stat st;
    if (stat(l->root, &st) != 0 || !S_ISDIR(st.st_mode))
        return gv_err_set(err, GV_E_NOTFOUND, "--python-root %s: not a directory", root);
    if (!strcmp(l->root, "/"))
        l->root[0] = '\0'; /* this machine's own root: nothing to enter */
    static const char *const binds[] = {"/proc", "/sys", "/dev"};
    for (int i = 0; i < 3 && l->root[0]; i++) {
        char dst[PATH_MAX];
        snprintf(dst, sizeof dst, "%s%s", l->root, binds[i]);
        if (lstat(dst, &st) != 0 || !S_ISDIR(st.st_mode))
            continue; /* no such directory (a link is none): leave it so */
        add_bind(l, binds[i], dst);
    }
    int rc = l->root[0] ? plan_host_driver(l, getenv(HOST_DRIVER_VAR), err) : GV_OK;
    if (rc)
        return rc;
    l->userns = geteuid() != 0;
    snprintf(l->uid_map, sizeof l->uid_map, "0 %u 1", (unsigned)geteuid());
    snprintf(l->gid_map, sizeof l->gid_map, "0 %u 1", (unsigned)getegid());
    return GV_OK;
}

/* Whether NAME=VALUE is ours to pass into an image's environment: gpuvet's own
 * GPUVET_* variables and the caller's choice of devices. */
static int passed_into_image(const char *kv)
{
    static const char *const vis[] = {"CUDA_VISIBLE_DEVICES=", "HIP_VISIBLE_DEVICES=",
                                      "ROCR_VISIBLE_DEVICES="};
    if (!strncmp(kv, "GPUVET_", 7))
        return 1;
    for (size_t i = 0; i < sizeof vis / sizeof vis[0]; i++)
        if (!strncmp(kv, vis[i], strlen(vis[i])))
            return 1;
    return 0;
}

/* Appends a copy of kv to env (room for it was counted); -1 out of memory. */
static int env_add(char **env, size_t *k, const char *kv)
{
    env[*k] = strdup(kv);
    return env[(*k)++] ? 0 : -1;
}

static void env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

/* The end of a child's environment: FD_VAR added at env[k] (room for it was
 * counted), img freed; NULL (err set) when anything failed or bad. */
static char **env_end(char **env, size_t k, int bad, int fd, char *img, struct gv_err *err)
{
    char var[64];
    snprintf(var, sizeof var, FD_VAR "=%d", fd);
    if (!bad)
        bad = env_add(env, &k, var);
    free(img);
    if (bad) {
        env_free(env);
        gv_err_set(err, GV_E_NOMEM, "the worker's environment");
        return NULL;
    }
    return env;
}

/* The image's Env (ENV_FILE_VAR's file: NUL-separated NAME=VALUE) instead of ours,
 * with ours passed_into_image and, with host_driver, LD_LIBRARY_PATH led by
 * HOST_DRIVER_DIR; without ENV_FILE_VAR ours. Never FD_VAR from either. */
static char **child_env(int fd, int host_driver, struct gv_err *err)
{
    const char *file = getenv(ENV_FILE_VAR);
    char *img = NULL;
    size_t len = 0, n = 0, k = 0;
    if (file && *file && gv_read_file(file, 1u << 20, &img, &len, err) != GV_OK)
        return NULL;
    for (size_t i = 0; img && i < len; i++)
        n += img[i] == '\0';
    for (size_t i = 0; environ && environ[i]; i++)
        n++;
    char **env = calloc(n + 4, sizeof *env);
    int bad = !env;
    const char *ld = "";
    for (size_t at = 0; img && at < len && !bad; at += strlen(img + at) + 1) {
        const char *kv = img + at;
        if (sets(kv, "LD_LIBRARY_PATH"))
            ld = kv + 16;
        else if (strchr(kv, '=') && !sets(kv, FD_VAR) && !passed_into_image(kv))
            bad = env_add(env, &k, kv);
    }
    for (size_t i = 0; environ && environ[i] && !bad; i++)
        if (!sets(environ[i], FD_VAR) && (!file || !*file || passed_into_image(environ[i])))
            bad = env_add(env, &k, environ[i]);
    char var[PATH_MAX + 64];
    if (!bad && host_driver) {
        snprintf(var, sizeof var, "LD_LIBRARY_PATH=" HOST_DRIVER_DIR "%s%.*s", ld[0] ? ":" : "",
                 PATH_MAX, ld);
        bad = env_add(env, &k, var);
    } else if (!bad && ld[0]) {
        snprintf(var, sizeof var, "LD_LIBRARY_PATH=%.*s", PATH_MAX, ld);
        bad = env_add(env, &k, var);
    }
    return env_end(env, k, bad, fd, img, err);
}

/* The referee's environment: nothing of ours but HOME; a fixed PATH, the C
 * locale and thread count, inside an image the image's own LD_LIBRARY_PATH (its
 * libraries are part of its interpreter); no LD_PRELOAD, no PYTHON*, no BLAS,
 * OpenMP or ATen variables (python -I ignores PYTHON* anyway). */
static char **clean_env(int fd, int threads, struct gv_err *err)
{
    const char *file = getenv(ENV_FILE_VAR), *home = getenv("HOME"), *ld = NULL;
    char *img = NULL;
    size_t len = 0, k = 0;
    if (file && *file && gv_read_file(file, 1u << 20, &img, &len, err) != GV_OK)
        return NULL;
    for (size_t at = 0; img && at < len; at += strlen(img + at) + 1)
        if (sets(img + at, "LD_LIBRARY_PATH"))
            ld = img + at;
    char **env = calloc(8, sizeof *env);
    char var[PATH_MAX + 64];
    int bad = !env;
    if (!bad && ld && strlen(ld) < sizeof var)
        bad = env_add(env, &k, ld);
    if (!bad && home && strlen(home) < PATH_MAX) {
        snprintf(var, sizeof var, "HOME=%s", home);
        bad = env_add(env, &k, var);
    }
    if (!bad)
        bad = env_add(env, &k, "PATH=/usr/local/bin:/usr/bin:/bin") ||
              env_add(env, &k, "LC_ALL=C");
    snprintf(var, sizeof var, "OMP_NUM_THREADS=%d", threads);
    if (!bad)
        bad = env_add(env, &k, var);
    return env_end(env, k, bad, fd, img, err);
}

void gv_torch_proc_stop(struct gv_torch_proc *p)
{
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
    gv_ipc_reap(p->pid);
    p->pid = -1;
    if (p->out >= 0)
        close(p->out);
    p->out = -1;
}

void gv_torch_proc_tail(const struct gv_torch_proc *p, char *out, size_t n)
{
    out[0] = '\0';
    if (p->out < 0 || n < 2)
        return;
    off_t end = lseek(p->out, 0, SEEK_END);
    char buf[1200];
    off_t from = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
    ssize_t k = end > 0 ? pread(p->out, buf, (size_t)(end - from), from) : 0;
    if (k <= 0)
        return;
    buf[k] = '\0';
    while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
        buf[--k] = '\0';
    /* the last lines, joined with " | ", control characters dropped */
    const char *start = buf;
    int lines = 0;
    for (ssize_t i = k - 1; i >= 0; i--)
        if (buf[i] == '\n' && ++lines == 6) {
            start = buf + i + 1;
            break;
        }
    size_t o = 0;
    for (const char *c = start; *c && o + 4 < n; c++) {
        if (*c == '\n') {
            memcpy(out + o, " | ", 3);
            o += 3;
        } else if ((unsigned char)*c >= 0x20 || *c == '\t') {
            out[o++] = *c == '\t' ? ' ' : *c;
        }
    }
    out[o] = '\0';
}

/* Why the worker is gone: "exited with status N" / "died of signal N (NAME)". */
static void exit_text(struct gv_torch_proc *p, char *out, size_t n)
{
    int st = 0;
    snprintf(out, n, "stopped answering");
    if (p->pid <= 0)
        return;
    pid_t r;
    for (int i = 0; i < 100; i++) { /* it closed the socket: it is exiting */
        r = waitpid(p->pid, &st, WNOHANG);
        if (r != 0)
            break;
        usleep(10000);
    }
    if (r == p->pid) {
        p->pid = -1;
        if (WIFSIGNALED(st))
            snprintf(out, n, "died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
        else
            snprintf(out, n, "exited with status %d", WEXITSTATUS(st));
    }
}

/* Fills err with what happened to the worker, its last output, and stops it. */
static int gone(struct gv_torch_proc *p, int code, const char *when, struct gv_err *err)
{
    char how[128], tail[700];
    exit_text(p, how, sizeof how);
    gv_torch_proc_tail(p, tail, sizeof tail);
    gv_err_set(err, code, "the PyTorch worker (%s) %s %s%s%s", p->python, how, when,
               tail[0] ? "; it printed: " : "", tail);
    gv_torch_proc_stop(p);
    return code;
}

int gv_torch_send(struct gv_torch_proc *p, json_t *hdr, const struct gv_torch_part *parts,
                  int nparts, struct gv_err *err)
{
    size_t total = 0;
    for (int i = 0; i < nparts; i++)
        total += parts[i].bytes;
    json_object_set_new(hdr, "nbytes", json_integer((json_int_t)total));
    char *text = gv_json_dumps(hdr, JSON_COMPACT);
    if (!text)
        return gv_err_set(err, GV_E_NOMEM, "torch worker: message");
    uint32_t len = (uint32_t)strlen(text);
    unsigned char le[4] = {(unsigned char)len, (unsigned char)(len >> 8),
                           (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
    int bad = p->fd < 0 || gv_ipc_send_all(p->fd, le, 4) || gv_ipc_send_all(p->fd, text, len);
    free(text);
    for (int i = 0; i < nparts && !bad; i++)
        bad = gv_ipc_send_all(p->fd, parts[i].data, parts[i].bytes) != 0;
    return bad ? gone(p, GV_E_DEVICE, "while gpuvet was sending", err) : GV_OK;
}

/* Reads one header; 0 with r filled, or an error (the worker stopped). */
static int recv_header(struct gv_torch_proc *p, int timeout_ms, struct gv_torch_reply *r,
                       struct gv_err *err)
{
    memset(r, 0, sizeof *r);
    unsigned char le[4];
    int k = p->fd >= 0 ? gv_ipc_recv_all(p->fd, le, 4, timeout_ms) : -1;
    if (k == -2) {
        gv_err_set(err, GV_E_TIMEOUT, "the PyTorch worker (%s) did not answer within %d s; "
                   "killed", p->python, timeout_ms / 1000);
        gv_torch_proc_stop(p);
        return GV_E_TIMEOUT;
    }
    if (k)
        return gone(p, GV_E_DEVICE, "before answering", err);
    uint32_t len = (uint32_t)le[0] | (uint32_t)le[1] << 8 | (uint32_t)le[2] << 16 |
                   (uint32_t)le[3] << 24;
    if (len == 0 || len > MAX_HEADER) {
        gv_torch_proc_stop(p);
        return gv_err_set(err, GV_E_FORMAT, "the PyTorch worker sent a message header of %u "
                          "bytes", len);
    }
    char *text = malloc(len + 1);
    if (!text)
        return gv_err_set(err, GV_E_NOMEM, "torch worker: %u bytes", len);
    k = gv_ipc_recv_all(p->fd, text, len, timeout_ms);
    int rc = GV_OK;
    if (k)
        rc = gone(p, GV_E_DEVICE, "in the middle of a message", err);
    else if ((rc = gv_torch_reply_parse(text, len, r, err)) != GV_OK)
        gv_torch_proc_stop(p);
    free(text);
    return rc;
}

int gv_torch_recv(struct gv_torch_proc *p, int timeout_ms, void *payload, size_t payload_bytes,
                  struct gv_torch_reply *r, struct gv_err *err)
{
    int rc = recv_header(p, timeout_ms, r, err);
    if (rc)
        return rc;
    if (r->nbytes != (r->ok ? payload_bytes : 0)) {
        gv_torch_proc_stop(p);
        gv_torch_reply_free(r);
        return gv_err_set(err, GV_E_FORMAT, "the PyTorch worker sent %llu payload bytes where "
                          "%zu were expected", (unsigned long long)r->nbytes,
                          r->ok ? payload_bytes : (size_t)0);
    }
    if (r->nbytes && gv_ipc_recv_all(p->fd, payload, (size_t)r->nbytes, timeout_ms) != 0) {
        gv_torch_reply_free(r);
        return gone(p, GV_E_DEVICE, "while sending its output", err);
    }
    return GV_OK;
}

int gv_torch_recv_any(struct gv_torch_proc *p, int timeout_ms, size_t max, void **payload,
                      size_t *len, struct gv_torch_reply *r, struct gv_err *err)
{
    *payload = NULL;
    *len = 0;
    int rc = recv_header(p, timeout_ms, r, err);
    if (rc)
        return rc;
    if (r->nbytes > max) {
        gv_torch_proc_stop(p);
        gv_torch_reply_free(r);
        return gv_err_set(err, GV_E_FORMAT, "the PyTorch worker announced %llu payload bytes, "
                          "more than the %zu allowed", (unsigned long long)r->nbytes, max);
    }
    if (!r->nbytes)
        return GV_OK;
    void *buf = malloc((size_t)r->nbytes);
    if (!buf) {
        gv_torch_reply_free(r);
        return gv_err_set(err, GV_E_NOMEM, "%llu bytes from the PyTorch worker",
                          (unsigned long long)r->nbytes);
    }
    if (gv_ipc_recv_all(p->fd, buf, (size_t)r->nbytes, timeout_ms) != 0) {
        free(buf);
        gv_torch_reply_free(r);
        return gone(p, GV_E_DEVICE, "while sending its data", err);
    }
    *payload = buf;
    *len = (size_t)r->nbytes;
    return GV_OK;
}

/* Sets l's command line: python -c BOOT, or (clean) python -I -S -c with
 * boot_site first (*code, malloc'ed, to free). */
static int plan_argv(struct launch *l, int clean, char **code)
{
    int i = 0;
    *code = NULL;
    l->argv[i++] = l->exe;
    if (clean) {
        size_t n = strlen(boot_site), m = strlen(boot);
        if (!(*code = malloc(n + m + 1)))
            return -1;
        memcpy(*code, boot_site, n);
        memcpy(*code + n, boot, m + 1);
        l->argv[i++] = (char *)"-I";
        l->argv[i++] = (char *)"-S";
    }
    l->argv[i++] = (char *)"-c";
    l->argv[i++] = *code ? *code : (char *)boot;
    l->argv[i] = NULL;
    return 0;
}

static int start_proc(struct gv_torch_proc *p, const char *python, const char *root,
                      int clean_threads, struct gv_err *err)
{
    p->pid = -1;
    p->fd = p->out = -1;
    int have = 0;
    for (int i = 0; i < gv_python_sources_count; i++)
        have |= !strcmp(gv_python_sources[i].name, WORKER_MODULE ".py");
    if (!have)
        return gv_err_set(err, GV_E_LIB, "this gpuvet was built without its PyTorch worker");
    struct launch *l = calloc(1, sizeof *l);
    if (!l)
        return gv_err_set(err, GV_E_NOMEM, "torch worker");
    int rc = plan_root(l, root, err);
    if (!rc)
        rc = resolve_python(l, python && *python ? python : "python3", err);
    if (rc) {
        free(l);
        return rc;
    }
    snprintf(p->python, sizeof p->python, "%s%s%s", l->exe, l->root[0] ? " in " : "", l->root);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        free(l);
        return gv_err_set(err, GV_E_DEVICE, "socketpair: %s", strerror(errno));
    }
    p->out = memfd_create("gpuvet-torch-output", MFD_CLOEXEC);
    struct gv_err env_err = {0};
    l->envp = clean_threads > 0 ? clean_env(sv[1], clean_threads, &env_err)
                                : child_env(sv[1], l->host_driver, &env_err);
    char *code = NULL;
    if (plan_argv(l, clean_threads > 0, &code)) {
        env_free(l->envp);
        l->envp = NULL;
    }
    l->sock = sv[1];
    l->out = p->out;
    pid_t pid = p->out >= 0 && l->envp ? fork() : -1;
    if (pid == 0)
        child_main(l);
    int fork_errno = errno;
    close(sv[1]);
    int no_env = !l->envp;
    env_free(l->envp);
    free(code);
    free(l);
    p->fd = sv[0];
    if (no_env) {
        gv_torch_proc_stop(p);
        *err = env_err;
        return err->code ? err->code : gv_err_set(err, GV_E_NOMEM, "the worker's environment");
    }
    if (pid < 0) {
        gv_torch_proc_stop(p);
        return gv_err_set(err, GV_E_DEVICE, "starting the PyTorch worker: %s",
                          strerror(fork_errno));
    }
    p->pid = pid;
    if (send_scripts(p->fd))
        return gone(p, GV_E_LIB, "before it could read the worker script", err);
    struct gv_torch_reply hello;
    rc = gv_torch_recv(p, 120 * 1000, NULL, 0, &hello, err);
    if (rc) {
        gv_err_prefix(err, "starting %s", p->python);
        return rc == GV_E_DEVICE ? GV_E_LIB : rc;
    }
    int ok = hello.ok;
    gv_torch_reply_free(&hello);
    if (!ok) {
        gv_torch_proc_stop(p);
        return gv_err_set(err, GV_E_LIB, "%s: the worker script did not start", p->python);
    }
    return GV_OK;
}

int gv_torch_proc_start(struct gv_torch_proc *p, const char *python, const char *root,
                        struct gv_err *err)
{
    return start_proc(p, python, root, 0, err);
}

int gv_torch_proc_start_clean(struct gv_torch_proc *p, const char *python, const char *root,
                              int threads, struct gv_err *err)
{
    return start_proc(p, python, root, threads > 0 ? threads : 1, err);
}
