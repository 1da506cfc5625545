/* Which regular files of an image a snapshot reads (docs/image.md, "What is
 * read, and how"): their content is written into the staging tree, every
 * other file is an empty sparse file of its size. */
#include <string.h>

#include "image/image.h"

#define KEEP_SMALL (1LL << 20)

/* Larger files the environment room reads (src/env: dpkg.c, ldcache.c, the
 * rpm reader, the wheel readers). */
static const char *const keep_exact[] = {
    "var/lib/dpkg/status",
    "etc/ld.so.cache",
};
static const char *const keep_under[] = {
    "var/lib/rpm/",
    "usr/lib/sysimage/rpm/",
};
static const char *const keep_suffix[] = {
    ".dist-info/METADATA",
    ".dist-info/RECORD",
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* An AMDGPU code object (rocBLAS's Tensile kernels, *.co, *.hsaco): no snapshot
 * reader opens one on its own; offload bundles inside libraries are read there. */
static int amdgpu_code(const unsigned char *head, size_t headlen)
{
    return headlen >= 20 && memcmp(head, "\177ELF", 4) == 0 && head[18] == 224 && head[19] == 0;
}

int gv_image_keep(const char *path, long long size, const unsigned char *head, size_t headlen)
{
    if (amdgpu_code(head, headlen))
        return 0;
    if (size <= KEEP_SMALL)
        return 1;
    if (headlen >= 4 && memcmp(head, "\177ELF", 4) == 0)
        return 1;
    while (*path == '/')
        path++;
    for (size_t i = 0; i < sizeof keep_exact / sizeof *keep_exact; i++)
        if (strcmp(path, keep_exact[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof keep_under / sizeof *keep_under; i++)
        if (strncmp(path, keep_under[i], strlen(keep_under[i])) == 0)
            return 1;
    for (size_t i = 0; i < sizeof keep_suffix / sizeof *keep_suffix; i++)
        if (ends_with(path, keep_suffix[i]))
            return 1;
    return 0;
}
