/* The PyTorch worker process: starting the user's interpreter (on this
 * machine, or inside a root filesystem), handing it the worker script, and
 * the framed messages both sides exchange (torch_reply.h, docs/torch.md). */
#ifndef GV_DEV_TORCH_PROC_H
#define GV_DEV_TORCH_PROC_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"
#include "dev/torch/torch_reply.h"

struct gv_torch_proc {
    pid_t pid;   /* -1 when none */
    int fd;      /* our end of the socket pair */
    int out;     /* memfd holding the worker's stdout and stderr */
    char python[4096]; /* what was executed (a path inside root when root is set) */
};

/* Starts python (a path, or a name searched in PATH; inside root when root is
 * not NULL/""), sends the embedded worker script and waits for its hello.
 * GV_E_NOTFOUND: no such interpreter; GV_E_LIB: it exited or answered
 * nonsense (the message quotes its last output lines). */
int gv_torch_proc_start(struct gv_torch_proc *p, const char *python, const char *root,
                        struct gv_err *err);
/* The same interpreter started clean, for bisect's float64 referee
 * (docs/capture.md, "The referee"): python -I -S (no sitecustomize,
 * usercustomize, .pth file or PYTHON* variable), the interpreter's own
 * site-packages put on sys.path as plain directories, and an environment of
 * HOME, a fixed PATH, LC_ALL=C, OMP_NUM_THREADS=threads (inside an image also
 * the image's LD_LIBRARY_PATH): nothing else of ours, no LD_PRELOAD. */
int gv_torch_proc_start_clean(struct gv_torch_proc *p, const char *python, const char *root,
                              int threads, struct gv_err *err);
void gv_torch_proc_stop(struct gv_torch_proc *p);

/* Sends hdr (nbytes is set to the payload's total) and the payload parts. */
int gv_torch_send(struct gv_torch_proc *p, json_t *hdr, const struct gv_torch_part *parts,
                  int nparts, struct gv_err *err);
/* Receives one reply within timeout_ms; its payload must be exactly
 * payload_bytes long (0 for replies without one) and goes to payload.
 * GV_E_TIMEOUT: the worker is killed; GV_E_DEVICE: it died or closed the
 * socket (the message says how, with its last output lines); GV_E_FORMAT: a
 * malformed reply (the worker is killed). */
int gv_torch_recv(struct gv_torch_proc *p, int timeout_ms, void *payload, size_t payload_bytes,
                  struct gv_torch_reply *r, struct gv_err *err);

/* As gv_torch_recv for a reply whose payload may have any size up to max: it is
 * malloc'ed into *payload (NULL when empty), *len bytes. */
int gv_torch_recv_any(struct gv_torch_proc *p, int timeout_ms, size_t max, void **payload,
                      size_t *len, struct gv_torch_reply *r, struct gv_err *err);

/* The last lines the worker printed, on one line ("" when none). */
void gv_torch_proc_tail(const struct gv_torch_proc *p, char *out, size_t n);

#endif
