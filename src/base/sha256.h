/* SHA-256, for content hashes of libraries, inputs and outputs. */
#ifndef GV_BASE_SHA256_H
#define GV_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct gv_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t block[64];
    size_t fill;
};

void gv_sha256_init(struct gv_sha256 *s);
void gv_sha256_update(struct gv_sha256 *s, const void *data, size_t len);
void gv_sha256_final(struct gv_sha256 *s, uint8_t out[32]);
/* Lower-case hex of the digest, 65 bytes with the NUL. */
void gv_sha256_hex(const uint8_t digest[32], char out[65]);
void gv_sha256_buf_hex(const void *data, size_t len, char out[65]);
/* 1 when the CPU's SHA extensions are used (GPUVET_NO_SHANI=1 turns them off). */
int gv_sha256_accelerated(void);
/* Hash a file's contents by streaming it (never loads it whole). */
int gv_sha256_file_hex(const char *path, char out[65], struct gv_err *err);
/* The same for a file already open as fd (closed here; name is for messages). */
int gv_sha256_fd_hex(int fd, const char *name, char out[65], struct gv_err *err);

#endif
