/* Which bytes of a kept ELF file are written into a snapshot's staging tree:
 * all but the device code objects of its clang offload bundles past their
 * first page (sparse.c). Fed the file's bytes once, in order; then asked, for
 * each stretch of the piece just fed, whether to write it or leave a hole. */
#ifndef GV_IMAGE_SPARSE_H
#define GV_IMAGE_SPARSE_H

#include <stddef.h>

struct gv_sparse_range {
    long long from, to;
};

struct gv_sparse {
    long long size, pos;           /* the file's size; bytes fed so far */
    unsigned char tail[23];        /* the last bytes searched, for a magic across pieces */
    size_t ntail;
    long long bundle_at;           /* a magic whose entry table is being collected, or -1 */
    unsigned char *table;
    size_t have, want;
    struct gv_sparse_range *skip;  /* holes, sorted; those before first are behind */
    size_t nskip, cap, first;
    size_t bundles;                /* bundles whose code became holes */
};

void gv_sparse_start(struct gv_sparse *sp, long long size);
/* The next n bytes of the file. 0, or -1 out of memory. */
int gv_sparse_feed(struct gv_sparse *sp, const unsigned char *p, size_t n);
/* For the bytes from offset off (inside the piece just fed), at most n: how
 * many in a row are written (*write 1) or left a hole (*write 0). */
size_t gv_sparse_run(struct gv_sparse *sp, long long off, size_t n, int *write);
void gv_sparse_end(struct gv_sparse *sp);

#endif
