/* The worker process behind gv_backend_cuda / gv_backend_hip (see worker.h). */
#include "dev/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dev/gpu.h"
#include "dev/ipc.h"
#include "dev/vendor.h"
#include "base/json.h"

#define ENV_NAME "GPUVET_WORKER"
enum { OP_SUPPORTS = 1, OP_RUN = 2, OP_DESCRIBE = 3 };

struct req {
    int32_t op;
    struct gv_case c; /* c.id travels in id[] */
    char id[160];
    int32_t nin;
    int32_t in_dtype[4];
    uint64_t in_count[4];
    int32_t out_dtype;
    uint64_t out_count;
};

struct resp {
    int32_t rc;
    struct gv_err err;
    struct gv_run_info info;
    uint64_t nbytes; /* output bytes or JSON text that follow */
};

/* ---- the child ---- */

static const struct gv_backend *inproc_of(const char *name)
{
    if (strcmp(name, "cuda") == 0)
        return &gv_backend_cuda_inproc;
    if (strcmp(name, "hip") == 0)
        return &gv_backend_hip_inproc;
    return NULL;
}

static int reply(int fd, struct resp *r, const void *data)
{
    if (gv_ipc_send_all(fd, r, sizeof *r))
        return -1;
    return r->nbytes ? gv_ipc_send_all(fd, data, r->nbytes) : 0;
}

static int reply_json(int fd, struct resp *r, json_t *j)
{
    char *s = j ? gv_json_dumps(j, JSON_COMPACT) : NULL;
    r->nbytes = s ? strlen(s) : 0;
    int rc = reply(fd, r, s);
    free(s);
    json_decref(j);
    return rc;
}

static int serve_run(int fd, const struct gv_backend *be, struct gv_device *dev, struct req *q)
{
    struct resp r = {0};
    struct gv_buffer in[4] = {{0}};
    struct gv_buffer out = {(enum gv_dtype)q->out_dtype, (size_t)q->out_count, NULL};
    int nin = q->nin < 0 || q->nin > 4 ? 0 : q->nin, ok = 1;
    for (int i = 0; i < nin && ok; i++) {
        size_t bytes = (size_t)q->in_count[i] * gv_dtype_size((enum gv_dtype)q->in_dtype[i]);
        in[i] = (struct gv_buffer){(enum gv_dtype)q->in_dtype[i], (size_t)q->in_count[i],
                                   malloc(bytes ? bytes : 1)};
        ok = in[i].data && gv_ipc_recv_all(fd, in[i].data, bytes, -1) == 0;
    }
    size_t obytes = out.count * gv_dtype_size(out.dtype);
    out.data = calloc(obytes ? obytes : 1, 1);
    if (!ok || !out.data) {
        r.rc = gv_err_set(&r.err, GV_E_NOMEM, "worker: %zu output bytes", obytes);
    } else {
        r.rc = be->run(dev, &q->c, in, nin, &out, &r.info, &r.err);
        r.nbytes = r.rc == GV_OK ? obytes : 0;
    }
    int rc = ok ? reply(fd, &r, out.data) : -1;
    for (int i = 0; i < nin; i++)
        free(in[i].data);
    free(out.data);
    return rc;
}

static void worker_main(const char *backend, int fd, const char *spec)
{
    const struct gv_backend *be = inproc_of(backend);
    struct gv_device *dev = NULL;
    struct resp r = {0};
    r.rc = be ? be->open(spec, &dev, &r.err)
              : gv_err_set(&r.err, GV_E_USAGE, "worker: unknown backend %s", backend);
    if (reply_json(fd, &r, r.rc == GV_OK ? be->describe(dev) : NULL) || r.rc)
        _exit(0);
    struct req q;
    while (gv_ipc_recv_all(fd, &q, sizeof q, -1) == 0) {
        q.id[sizeof q.id - 1] = '\0';
        q.c.id = q.id;
        struct resp a = {0};
        if (q.op == OP_SUPPORTS) {
            a.rc = be->supports(dev, &q.c, &a.err);
            if (reply(fd, &a, NULL))
                break;
        } else if (q.op == OP_DESCRIBE) {
            if (reply_json(fd, &a, be->describe(dev)))
                break;
        } else if (q.op == OP_RUN) {
            if (serve_run(fd, be, dev, &q))
                break;
        } else {
            break;
        }
    }
    /* no orderly close: after a fault the driver state is not trusted */
    _exit(0);
}

/* Every program linked with gpuvet_core becomes a worker when started with
 * GPUVET_WORKER=backend,fd,spec (only gv_worker_open sets it). */
__attribute__((constructor)) static void worker_entry(void)
{
    const char *v = getenv(ENV_NAME);
    if (!v || !*v)
        return;
    char name[16];
    int fd = -1, n = 0;
    if (sscanf(v, "%15[a-z],%d,%n", name, &fd, &n) != 2 || fd < 0)
        _exit(111);
    char spec[256];
    snprintf(spec, sizeof spec, "%s", v + n);
    unsetenv(ENV_NAME);
    worker_main(name, fd, spec);
}

/* ---- the parent ---- */

struct gv_worker {
    char backend[16];
    char spec[256];
    pid_t pid;
    int fd;
    json_t *desc;      /* the child's describe() */
    int restarts;
    char last_restart[1024];
    double timeout;    /* seconds to wait for an answer beyond the case timeout */
};

static void stop_child(struct gv_worker *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    gv_ipc_reap(w->pid);
    w->pid = -1;
}

static int child_gone(struct gv_worker *w, struct gv_err *err, const char *what)
{
    int st = 0;
    pid_t p = w->pid > 0 ? waitpid(w->pid, &st, WNOHANG) : 0;
    if (p == w->pid && p > 0) {
        w->pid = -1;
        if (WIFSIGNALED(st))
            return gv_err_set(err, GV_E_DEVICE, "the %s worker process died %s (signal %d, %s)",
                              w->backend, what, WTERMSIG(st), strsignal(WTERMSIG(st)));
        return gv_err_set(err, GV_E_DEVICE, "the %s worker process exited %s (status %d)",
                          w->backend, what, WEXITSTATUS(st));
    }
    return gv_err_set(err, GV_E_DEVICE, "the %s worker process stopped answering %s",
                      w->backend, what);
}

/* Reads a response; on timeout kills the child. */
static int get_resp(struct gv_worker *w, struct resp *r, int timeout_ms, struct gv_err *err,
                    const char *what)
{
    int k = gv_ipc_recv_all(w->fd, r, sizeof *r, timeout_ms);
    if (k == -2) {
        stop_child(w);
        return gv_err_set(err, GV_E_TIMEOUT, "the %s worker did not answer %s within %d s; "
                          "killed", w->backend, what, timeout_ms / 1000);
    }
    if (k)
        return child_gone(w, err, what);
    r->err.msg[sizeof r->err.msg - 1] = '\0';
    return GV_OK;
}

static json_t *get_json(struct gv_worker *w, uint64_t n, int timeout_ms)
{
    if (n == 0 || n > (64u << 20))
        return NULL;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    json_t *j = NULL;
    if (gv_ipc_recv_all(w->fd, s, n, timeout_ms) == 0) {
        s[n] = '\0';
        j = json_loads(s, 0, NULL);
    }
    free(s);
    return j;
}

/* The environment for the child: ours plus GPUVET_WORKER (built before fork,
 * so that the child only calls async-signal-safe functions before exec). */
static char **child_env(const char *var, const char *libpath)
{
    extern char **environ;
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc(n + 3, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], ENV_NAME "=", sizeof ENV_NAME) != 0 &&
            strncmp(environ[i], "GPUVET_LIB_PATH=", 16) != 0)
            env[k++] = environ[i];
    env[k++] = (char *)var;
    if (libpath)
        env[k++] = (char *)libpath; /* --lib-path reaches the child this way */
    env[k] = NULL;
    return env;
}

static int start_child(struct gv_worker *w, struct gv_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return gv_err_set(err, GV_E_DEVICE, "socketpair: %s", strerror(errno));
    char var[512];
    snprintf(var, sizeof var, "%s=%s,%d,%s", ENV_NAME, w->backend, sv[1], w->spec);
    char *libpath = NULL;
    if (*gv_vendor_lib_path() && asprintf(&libpath, "GPUVET_LIB_PATH=%s", gv_vendor_lib_path()) < 0)
        libpath = NULL;
    char **env = child_env(var, libpath);
    char *argv[] = {(char *)"gpuvet-worker", NULL};
    pid_t pid = env ? fork() : -1;
    if (pid == 0) {
        fcntl(sv[1], F_SETFD, 0); /* keep the child's end across exec */
        execve("/proc/self/exe", argv, env);
        _exit(127);
    }
    free(env);
    free(libpath);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return gv_err_set(err, GV_E_DEVICE, "starting the %s worker: %s", w->backend,
                          strerror(errno));
    }
    w->pid = pid;
    w->fd = sv[0];
    /* opening compiles the kernels: allow time for it */
    struct resp r;
    int rc = get_resp(w, &r, 300 * 1000, err, "while opening the device");
    if (rc) {
        stop_child(w);
        return rc;
    }
    json_t *d = get_json(w, r.nbytes, 60 * 1000);
    if (r.rc) {
        json_decref(d);
        stop_child(w);
        *err = r.err;
        return r.rc;
    }
    json_decref(w->desc);
    w->desc = d ? d : json_object();
    return GV_OK;
}

int gv_worker_open(const char *backend, const char *spec, struct gv_worker **out,
                   struct gv_err *err)
{
    *out = NULL;
    struct gv_worker *w = calloc(1, sizeof *w);
    if (!w)
        return gv_err_set(err, GV_E_NOMEM, "worker");
    snprintf(w->backend, sizeof w->backend, "%s", backend);
    snprintf(w->spec, sizeof w->spec, "%s", spec ? spec : "");
    w->pid = -1;
    w->fd = -1;
    w->timeout = gv_gpu_case_timeout() + 60;
    int rc = start_child(w, err);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return GV_OK;
}

void gv_worker_close(struct gv_worker *w)
{
    if (!w)
        return;
    stop_child(w);
    json_decref(w->desc);
    free(w);
}

/* The child after a device error, a timeout or a crash is not trusted: the
 * next case starts a new one. */
static int ensure_child(struct gv_worker *w, struct gv_err *err)
{
    if (w->pid > 0 && w->fd >= 0)
        return GV_OK;
    w->restarts++;
    int rc = start_child(w, err);
    if (rc)
        gv_err_prefix(err, "restarting the %s worker", w->backend);
    return rc;
}

json_t *gv_worker_describe(struct gv_worker *w)
{
    json_t *o = w->desc ? json_deep_copy(w->desc) : json_object();
    json_t *k = json_object();
    json_object_set_new(k, "pid", json_integer(w->pid));
    json_object_set_new(k, "restarts", json_integer(w->restarts));
    if (w->last_restart[0])
        json_object_set_new(k, "last_restart_reason", json_string(w->last_restart));
    json_object_set_new(o, "worker", k);
    return o;
}

static void fill_req(struct req *q, int op, const struct gv_case *c)
{
    memset(q, 0, sizeof *q);
    q->op = op;
    q->c = *c;
    q->c.id = NULL;
    snprintf(q->id, sizeof q->id, "%s", c->id ? c->id : "");
}

int gv_worker_supports(struct gv_worker *w, const struct gv_case *c, struct gv_err *why)
{
    int rc = ensure_child(w, why);
    if (rc)
        return rc;
    struct req q;
    fill_req(&q, OP_SUPPORTS, c);
    struct resp r;
    if (gv_ipc_send_all(w->fd, &q, sizeof q))
        return child_gone(w, why, "before a supports() call");
    if ((rc = get_resp(w, &r, 60 * 1000, why, "supports()")))
        return rc;
    if (r.rc)
        *why = r.err;
    return r.rc;
}

static void retire(struct gv_worker *w, const struct gv_case *c, const struct gv_err *err)
{
    snprintf(w->last_restart, sizeof w->last_restart, "after %s: %s", c->id ? c->id : "?",
             err->msg);
    stop_child(w);
}

int gv_worker_run(struct gv_worker *w, const struct gv_case *c, const struct gv_buffer *in,
                  int nin, struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err)
{
    if (nin < 0 || nin > 4)
        return gv_err_set(err, GV_E_USAGE, "%s: %d inputs", c->id, nin);
    int rc = ensure_child(w, err);
    if (rc)
        return rc;
    struct req q;
    fill_req(&q, OP_RUN, c);
    q.nin = nin;
    for (int i = 0; i < nin; i++) {
        q.in_dtype[i] = in[i].dtype;
        q.in_count[i] = in[i].count;
    }
    q.out_dtype = out->dtype;
    q.out_count = out->count;
    int sent = gv_ipc_send_all(w->fd, &q, sizeof q) == 0;
    for (int i = 0; i < nin && sent; i++)
        sent = gv_ipc_send_all(w->fd, in[i].data, in[i].count * gv_dtype_size(in[i].dtype)) == 0;
    if (!sent) {
        child_gone(w, err, "while receiving a case");
        retire(w, c, err);
        return gv_err_prefix(err, "%s", c->id);
    }
    struct resp r;
    if ((rc = get_resp(w, &r, (int)(w->timeout * 1000), err, "while running the case"))) {
        retire(w, c, err);
        return gv_err_prefix(err, "%s", c->id);
    }
    size_t obytes = out->count * gv_dtype_size(out->dtype);
    if (r.rc == GV_OK && (r.nbytes != obytes ||
                          gv_ipc_recv_all(w->fd, out->data, obytes, (int)(w->timeout * 1000)))) {
        child_gone(w, err, "while sending the output");
        retire(w, c, err);
        return gv_err_prefix(err, "%s", c->id);
    }
    if (info)
        *info = r.info;
    if (r.rc) {
        *err = r.err;
        if (r.rc == GV_E_DEVICE || r.rc == GV_E_TIMEOUT)
            retire(w, c, err);
    }
    return r.rc;
}
