/* Reading ELF files without executing or mapping them: SONAME, DT_NEEDED,
 * RPATH/RUNPATH, sections. Every offset is bounds-checked: truncated or
 * hostile files give GV_E_FORMAT with a message naming the file. */
#ifndef GV_ENV_ELF_H
#define GV_ENV_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct gv_elf_section {
    char name[64];
    uint32_t type;
    uint64_t offset, size, addr, flags;
};

struct gv_elf_info {
    int elf_class;       /* 32 or 64 */
    int little_endian;
    uint16_t type;       /* ET_DYN, ET_EXEC, ... */
    uint16_t machine;    /* EM_X86_64 = 62, EM_AMDGPU = 224, ... */
    uint8_t osabi, abiversion;
    uint32_t flags;      /* e_flags (AMDGPU: EF_AMDGPU_MACH in the low byte) */
    char *soname;        /* NULL when absent */
    char *rpath, *runpath;
    char **needed;       /* DT_NEEDED entries */
    size_t n_needed;
    struct gv_elf_section *sections;
    size_t n_sections;
};

/* A whole regular file mapped read-only (gv_elf_map_file). size 0 gives
 * data == NULL. Callers must not keep pointers into it after unmapping. */
struct gv_elf_map {
    const uint8_t *data;
    size_t size;
};

#define GV_ELF_MAX_FILE (UINT64_C(4) << 30) /* 4 GiB */
#define GV_ELF_MAX_SECTIONS 65536            /* more is treated as corrupt */
#define GV_ELF_MAX_SEGMENTS 65536
#define GV_ELF_MAX_NEEDED 4096

/* Parse an ELF image held in memory. what names it in messages.
 * Section offsets/sizes (other than SHT_NOBITS) are checked to lie inside
 * data, so data + section->offset is safe to read for section->size bytes.
 * On error *out is left empty (nothing to free). */
int gv_elf_parse(const uint8_t *data, size_t size, const char *what, struct gv_elf_info *out,
                 struct gv_err *err);
/* Read and parse a file (mapped read-only; at most 4 GiB). */
int gv_elf_read_file(const char *path, struct gv_elf_info *out, struct gv_err *err);
/* The same for path inside root, opened through gv_root_open (src/base/fs.h):
 * links resolve inside root. root NULL or "/": the live machine. */
int gv_elf_read_rooted(const char *root, const char *path, struct gv_elf_info *out,
                       struct gv_err *err);
void gv_elf_free(struct gv_elf_info *info);
/* Map a regular file read-only (FIFOs, devices, directories are refused
 * without blocking; files over 4 GiB give GV_E_FORMAT). */
int gv_elf_map_file(const char *path, struct gv_elf_map *m, struct gv_err *err);
int gv_elf_map_rooted(const char *root, const char *path, struct gv_elf_map *m,
                      struct gv_err *err);
void gv_elf_unmap(struct gv_elf_map *m);
/* Bytes of a section inside the parsed image (NULL for SHT_NOBITS or an
 * empty section). data/size must be the image given to gv_elf_parse. */
const uint8_t *gv_elf_section_data(const struct gv_elf_section *sec, const uint8_t *data,
                                   size_t size);
const struct gv_elf_section *gv_elf_find_section(const struct gv_elf_info *info, const char *name);

#endif
