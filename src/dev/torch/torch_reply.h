/* The messages the PyTorch worker and gpuvet exchange (docs/torch.md): a JSON
 * header, then the payload's bytes; what gpuvet sends is given in parts, what the
 * worker answers is parsed into a gv_torch_reply. Below both the worker process
 * (torch_proc.h) and the PyTorch device (torch.h). */
#ifndef GV_DEV_TORCH_REPLY_H
#define GV_DEV_TORCH_REPLY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct gv_torch_part { /* one buffer of a message's payload */
    const void *data;
    size_t bytes;
};

/* One reply of the worker (the JSON header of a frame). */
struct gv_torch_reply {
    int ok;
    char status[32];   /* when !ok: unsupported, error, device, oom, or an open-failure kind */
    char error[1024];
    double seconds;
    char impl[512];
    uint64_t nbytes;   /* payload bytes that follow the header */
    json_t *describe;  /* owned (NULL when absent); free with gv_torch_reply_free */
    json_t *doc;       /* the whole header, owned */
};

/* Parses a header. GV_E_FORMAT, naming the field, for anything malformed:
 * not JSON, not an object, fields of the wrong type, nbytes out of range. */
int gv_torch_reply_parse(const char *text, size_t len, struct gv_torch_reply *r,
                         struct gv_err *err);
void gv_torch_reply_free(struct gv_torch_reply *r);

#endif
