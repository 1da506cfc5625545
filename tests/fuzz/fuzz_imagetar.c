/* Fuzz target: the layer applier's tar reader and tree (src/image/tar.c,
 * layer.c, tree.c). The bytes are an uncompressed layer whose digest and
 * diff_id are their own sha256 (so every check but the tar's passes),
 * applied to a fresh staging tree under a scratch directory, then freed:
 * nothing may crash, leak, or be left behind, whatever the headers say. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sha256.h"
#include "image/stage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char parent[4096];

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_imagetar: %s\n", why);
    __builtin_trap();
}

static void drop_parent(void) { rmdir(parent); }

static void make_parent(void)
{
    if (parent[0])
        return;
    const char *base = getenv("GV_TEST_TMP");
    snprintf(parent, sizeof parent, "%s/fuzz_imagetar.XXXXXX", base && *base ? base : "/tmp");
    if (base && *base)
        mkdir(base, 0755);
    if (!mkdtemp(parent))
        fail("cannot make the scratch directory");
    atexit(drop_parent);
}

static int parent_empty(void)
{
    DIR *d = opendir(parent);
    int empty = 1;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            empty = 0;
    if (d)
        closedir(d);
    return empty;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    make_parent();
    int fd = memfd_create("layer", MFD_CLOEXEC);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        fail("cannot write the memfd");
    struct gv_image_layer meta;
    memset(&meta, 0, sizeof meta);
    char hex[65];
    gv_sha256_buf_hex(data, size, hex);
    snprintf(meta.digest, sizeof meta.digest, "sha256:%s", hex);
    snprintf(meta.diff_id, sizeof meta.diff_id, "sha256:%s", hex);
    meta.codec = GV_CODEC_NONE;
    meta.size = (long long)size;
    struct gv_err err;
    memset(&err, 0, sizeof err);
    struct gv_blob *b = NULL;
    struct gv_image_tree *t = NULL;
    if (gv_blob_open_fd(fd, 0, (off_t)size, "layer", &b, &err) != GV_OK ||
        gv_stage_begin(GV_STAGE_SNAPSHOT, parent, 1, &t, &err) != GV_OK)
        fail(err.msg);
    close(fd);
    if (gv_stage_apply(t, 0, &meta, b, &err) != GV_OK && err.msg[0] == '\0')
        fail("an error without a message");
    char d[65];
    (void)gv_image_tree_digest(t, "/etc/passwd", d);
    (void)gv_image_tree_layer(t, "/usr/lib/x/../libc.so.6");
    gv_blob_close(b);
    gv_image_tree_free(t, 0);
    if (!parent_empty())
        fail("the staging directory was not removed");
    return 0;
}
