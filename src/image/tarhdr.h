/* The fields of a tar header block (ustar, GNU, pax), read the one way for
 * both tar readers of the image room: the layer applier (tar.c) and the
 * index of an archive's members (tarindex.c). */
#ifndef GV_IMAGE_TARHDR_H
#define GV_IMAGE_TARHDR_H

#include <stddef.h>

/* An octal field (spaces and NULs around), or GNU's base-256 (high bit set).
 * -1 when malformed, empty or too large. */
long long gv_tar_number(const unsigned char *f, size_t n);
/* The header's checksum field matches its bytes (unsigned or signed sum). */
int gv_tar_checksum_ok(const unsigned char *h);
/* A block of 512 zero bytes: the end-of-archive marker. */
int gv_tar_all_zero(const unsigned char *h);

#endif
