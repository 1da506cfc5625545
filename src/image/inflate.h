/* Inflating a gzip stream (one member or several, one after the other) in
 * pieces: ISA-L's inflate when libisal.so.2 can be opened (syms_isal.h), zlib
 * otherwise or when GPUVET_NO_ISAL=1 (read at each start). The output bytes
 * are the same either way. */
#ifndef GV_IMAGE_INFLATE_H
#define GV_IMAGE_INFLATE_H

#include <stddef.h>

#include "base/err.h"

struct gv_inflate;

/* A new stream. GV_E_NOMEM when it cannot be made. */
int gv_inflate_start(struct gv_inflate **zp, struct gv_err *err);
/* Inflates from *in (*n_in bytes) into *out (*n_out bytes of room) until the
 * input is used up or the room is full, moving both on. GV_E_FORMAT on a
 * corrupt stream ("corrupt gzip stream (why)"). */
int gv_inflate_feed(struct gv_inflate *z, const unsigned char **in, size_t *n_in,
                    unsigned char **out, size_t *n_out, struct gv_err *err);
/* The input is over: writes what the stream still holds into *out, sets
 * *done once the last member is complete (call again with new room while it
 * is not). GV_E_FORMAT "truncated gzip stream" when the input ended early. */
int gv_inflate_finish(struct gv_inflate *z, unsigned char **out, size_t *n_out, int *done,
                      struct gv_err *err);
void gv_inflate_end(struct gv_inflate *z);
/* "isa-l" or "zlib": which one this stream uses. */
const char *gv_inflate_impl(const struct gv_inflate *z);

#endif
