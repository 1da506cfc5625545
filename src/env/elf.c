/* ELF reader for ELF32/ELF64, either byte order. It never executes or
 * dlopens anything: the file is mapped read-only and every offset, size and
 * count read from it is checked against the image size before use. */
#include "env/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"

enum {
    PT_LOAD_ = 1,
    PT_DYNAMIC_ = 2,
    SHT_DYNAMIC_ = 6,
    SHT_NOBITS_ = 8,
    SHN_XINDEX_ = 0xffff,
    PN_XNUM_ = 0xffff,
    DT_NULL_ = 0,
    DT_NEEDED_ = 1,
    DT_STRTAB_ = 5,
    DT_STRSZ_ = 10,
    DT_SONAME_ = 14,
    DT_RPATH_ = 15,
    DT_RUNPATH_ = 29,
};

/* The image being parsed and where to report problems. */
struct rd {
    const uint8_t *d;
    size_t n;
    int is64, le;
    const char *what;
    struct gv_err *err;
};

/* Section and segment headers in host form. */
struct shdr {
    uint32_t name, type, link, info;
    uint64_t flags, addr, offset, size;
};

struct phdr {
    uint32_t type;
    uint64_t offset, vaddr, filesz;
};

/* A string table: [off, off + size) inside the image. */
struct strtab {
    uint64_t off, size;
    const char *label;
};

/* What the dynamic section says, before the strings are looked up. */
struct dyn {
    int have_strtab, have_strsz;
    uint64_t strtab, strsz;
    int have_soname, have_rpath, have_runpath;
    uint64_t soname, rpath, runpath;
    uint64_t *needed;
    size_t n_needed;
};

static int bad(const struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const struct rd *r, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gv_err_set(r->err, GV_E_FORMAT, "%s: not a valid ELF file: %s", r->what, msg);
}

static int in_image(const struct rd *r, uint64_t off, uint64_t len)
{
    return off <= r->n && len <= r->n - off;
}

/* Readers: the caller has checked that the bytes lie inside the image. */
static uint16_t get16(const struct rd *r, uint64_t off)
{
    const uint8_t *p = r->d + off;
    return r->le ? (uint16_t)(p[0] | p[1] << 8) : (uint16_t)(p[1] | p[0] << 8);
}

static uint32_t get32(const struct rd *r, uint64_t off)
{
    const uint8_t *p = r->d + off;
    if (r->le)
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

static uint64_t get64(const struct rd *r, uint64_t off)
{
    uint64_t lo = get32(r, off), hi = get32(r, off + 4);
    return r->le ? (hi << 32 | lo) : (lo << 32 | hi);
}

/* A word: 8 bytes in ELF64, 4 in ELF32. */
static uint64_t get_word(const struct rd *r, uint64_t off)
{
    return r->is64 ? get64(r, off) : get32(r, off);
}

/* ---- file header ---- */

struct ehdr {
    uint64_t phoff, shoff;
    uint32_t phentsize, phnum, shentsize, shnum, shstrndx;
};

static int read_ident(struct rd *r, struct gv_elf_info *out)
{
    if (r->n < 16)
        return bad(r, "%zu bytes, shorter than the 16-byte identification", r->n);
    if (memcmp(r->d, "\177ELF", 4) != 0)
        return bad(r, "no ELF magic");
    if (r->d[4] != 1 && r->d[4] != 2)
        return bad(r, "unknown class %u (EI_CLASS)", r->d[4]);
    if (r->d[5] != 1 && r->d[5] != 2)
        return bad(r, "unknown byte order %u (EI_DATA)", r->d[5]);
    if (r->d[6] != 1)
        return bad(r, "unknown version %u (EI_VERSION)", r->d[6]);
    r->is64 = r->d[4] == 2;
    r->le = r->d[5] == 1;
    out->elf_class = r->is64 ? 64 : 32;
    out->little_endian = r->le;
    out->osabi = r->d[7];
    out->abiversion = r->d[8];
    return GV_OK;
}

static int read_ehdr(struct rd *r, struct gv_elf_info *out, struct ehdr *h)
{
    size_t need = r->is64 ? 64 : 52;
    if (r->n < need)
        return bad(r, "%zu bytes, shorter than the %zu-byte file header", r->n, need);
    out->type = get16(r, 16);
    out->machine = get16(r, 18);
    uint64_t o = r->is64 ? 32 : 28; /* e_phoff */
    unsigned w = r->is64 ? 8 : 4;
    h->phoff = get_word(r, o);
    h->shoff = get_word(r, o + w);
    out->flags = get32(r, o + 2 * w);
    uint64_t q = o + 2 * w + 4 + 2; /* past e_flags and e_ehsize */
    h->phentsize = get16(r, q);
    h->phnum = get16(r, q + 2);
    h->shentsize = get16(r, q + 4);
    h->shnum = get16(r, q + 6);
    h->shstrndx = get16(r, q + 8);
    return GV_OK;
}

/* ---- section headers ---- */

static void read_shdr(const struct rd *r, uint64_t off, struct shdr *s)
{
    s->name = get32(r, off);
    s->type = get32(r, off + 4);
    if (r->is64) {
        s->flags = get64(r, off + 8);
        s->addr = get64(r, off + 16);
        s->offset = get64(r, off + 24);
        s->size = get64(r, off + 32);
        s->link = get32(r, off + 40);
        s->info = get32(r, off + 44);
    } else {
        s->flags = get32(r, off + 8);
        s->addr = get32(r, off + 12);
        s->offset = get32(r, off + 16);
        s->size = get32(r, off + 20);
        s->link = get32(r, off + 24);
        s->info = get32(r, off + 28);
    }
}

/* Section 0 carries the real counts when they do not fit the file header. */
static int apply_extended_counts(struct rd *r, struct ehdr *h)
{
    if (h->shoff == 0)
        return GV_OK;
    uint32_t min = r->is64 ? 64 : 40;
    if (h->shentsize < min)
        return bad(r, "section header size %u is smaller than %u", h->shentsize, min);
    if (!in_image(r, h->shoff, min))
        return bad(r, "section header table at offset %llu lies past the end of the file (%zu bytes)",
                   (unsigned long long)h->shoff, r->n);
    struct shdr s0;
    read_shdr(r, h->shoff, &s0);
    if (h->shnum == 0) {
        if (s0.size > GV_ELF_MAX_SECTIONS)
            return bad(r, "section count %llu is absurd (limit %d)", (unsigned long long)s0.size,
                       GV_ELF_MAX_SECTIONS);
        h->shnum = (uint32_t)s0.size;
    }
    if (h->shstrndx == SHN_XINDEX_)
        h->shstrndx = s0.link;
    if (h->phnum == PN_XNUM_)
        h->phnum = s0.info;
    return GV_OK;
}

static int load_sections(struct rd *r, const struct ehdr *h, struct shdr **out)
{
    *out = NULL;
    if (h->shoff == 0 || h->shnum == 0)
        return GV_OK;
    if (h->shnum > GV_ELF_MAX_SECTIONS)
        return bad(r, "section count %u is absurd (limit %d)", h->shnum, GV_ELF_MAX_SECTIONS);
    uint64_t len = (uint64_t)h->shnum * h->shentsize;
    if (!in_image(r, h->shoff, len))
        return bad(r, "section header table (offset %llu, %u x %u bytes) runs past the end of the file (%zu bytes)",
                   (unsigned long long)h->shoff, h->shnum, h->shentsize, r->n);
    struct shdr *s = calloc(h->shnum, sizeof *s);
    if (!s)
        return gv_err_set(r->err, GV_E_NOMEM, "%s: out of memory for %u section headers", r->what,
                          h->shnum);
    for (uint32_t i = 0; i < h->shnum; i++) {
        read_shdr(r, h->shoff + (uint64_t)i * h->shentsize, &s[i]);
        if (i > 0 && s[i].type != SHT_NOBITS_ && !in_image(r, s[i].offset, s[i].size)) {
            uint64_t off = s[i].offset, size = s[i].size;
            free(s);
            return bad(r, "section %u (offset %llu, size %llu) lies outside the file (%zu bytes)", i,
                       (unsigned long long)off, (unsigned long long)size, r->n);
        }
    }
    *out = s;
    return GV_OK;
}

/* Checks that the string at idx is NUL-terminated inside the table. */
static int table_string(const struct rd *r, const struct strtab *t, uint64_t idx, const char **s)
{
    if (idx >= t->size)
        return bad(r, "%s offset %llu is past the end of the table (%llu bytes)", t->label,
                   (unsigned long long)idx, (unsigned long long)t->size);
    const char *p = (const char *)r->d + t->off + idx;
    if (!memchr(p, '\0', (size_t)(t->size - idx)))
        return bad(r, "%s string at offset %llu is not terminated inside the table", t->label,
                   (unsigned long long)idx);
    *s = p;
    return GV_OK;
}

static int name_sections(struct rd *r, const struct ehdr *h, const struct shdr *sh,
                         struct gv_elf_info *out)
{
    if (!sh)
        return GV_OK;
    struct strtab names = {0, 0, "section name"};
    int have_names = h->shstrndx != 0;
    if (have_names) {
        if (h->shstrndx >= h->shnum)
            return bad(r, "section name table index %u is not below the section count %u",
                       h->shstrndx, h->shnum);
        const struct shdr *t = &sh[h->shstrndx];
        if (t->type == SHT_NOBITS_)
            return bad(r, "section name table (section %u) has no bytes in the file", h->shstrndx);
        names.off = t->offset;
        names.size = t->size;
    }
    out->sections = calloc(h->shnum, sizeof *out->sections);
    if (!out->sections)
        return gv_err_set(r->err, GV_E_NOMEM, "%s: out of memory for sections", r->what);
    out->n_sections = h->shnum;
    for (uint32_t i = 0; i < h->shnum; i++) {
        struct gv_elf_section *d = &out->sections[i];
        d->type = sh[i].type;
        d->offset = sh[i].offset;
        d->size = sh[i].size;
        d->addr = sh[i].addr;
        d->flags = sh[i].flags;
        if (have_names && i > 0) {
            const char *nm = "";
            int rc = table_string(r, &names, sh[i].name, &nm);
            if (rc) {
                gv_err_prefix(r->err, "section %u", i);
                return rc;
            }
            snprintf(d->name, sizeof d->name, "%s", nm);
        }
    }
    return GV_OK;
}

/* ---- program headers ---- */

static int load_segments(struct rd *r, const struct ehdr *h, struct phdr **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (h->phoff == 0 || h->phnum == 0)
        return GV_OK;
    uint32_t min = r->is64 ? 56 : 32;
    if (h->phentsize < min)
        return bad(r, "program header size %u is smaller than %u", h->phentsize, min);
    if (h->phnum > GV_ELF_MAX_SEGMENTS)
        return bad(r, "program header count %u is absurd (limit %d)", h->phnum,
                   GV_ELF_MAX_SEGMENTS);
    uint64_t len = (uint64_t)h->phnum * h->phentsize;
    if (!in_image(r, h->phoff, len))
        return bad(r, "program header table (offset %llu, %u x %u bytes) runs past the end of the file (%zu bytes)",
                   (unsigned long long)h->phoff, h->phnum, h->phentsize, r->n);
    struct phdr *p = calloc(h->phnum, sizeof *p);
    if (!p)
        return gv_err_set(r->err, GV_E_NOMEM, "%s: out of memory for program headers", r->what);
    for (uint32_t i = 0; i < h->phnum; i++) {
        uint64_t o = h->phoff + (uint64_t)i * h->phentsize;
        p[i].type = get32(r, o);
        p[i].offset = get_word(r, r->is64 ? o + 8 : o + 4);
        p[i].vaddr = get_word(r, r->is64 ? o + 16 : o + 8);
        p[i].filesz = get_word(r, r->is64 ? o + 32 : o + 16);
        if (!in_image(r, p[i].offset, p[i].filesz)) {
            struct phdr bad_seg = p[i];
            free(p);
            return bad(r, "segment %u (type %u, offset %llu, size %llu) lies outside the file (%zu bytes)",
                       i, bad_seg.type, (unsigned long long)bad_seg.offset,
                       (unsigned long long)bad_seg.filesz, r->n);
        }
    }
    *out = p;
    *n = h->phnum;
    return GV_OK;
}

/* File offset of a virtual address through the PT_LOAD segments; *avail is
 * how many bytes of that segment follow it in the file. */
static int vaddr_to_offset(const struct phdr *ph, size_t n, uint64_t addr, uint64_t *off,
                           uint64_t *avail)
{
    for (size_t i = 0; i < n; i++) {
        if (ph[i].type != PT_LOAD_ || addr < ph[i].vaddr)
            continue;
        uint64_t delta = addr - ph[i].vaddr;
        if (delta < ph[i].filesz) {
            *off = ph[i].offset + delta;
            *avail = ph[i].filesz - delta;
            return 1;
        }
    }
    return 0;
}

/* ---- dynamic section ---- */

/* Where the dynamic array is: PT_DYNAMIC, else a SHT_DYNAMIC section.
 * *link is the section index of its string table (0 when unknown). */
static int find_dynamic(const struct phdr *ph, size_t nph, const struct shdr *sh, uint32_t nsh,
                        uint64_t *off, uint64_t *size, uint32_t *link)
{
    int found = 0;
    *link = 0;
    for (uint32_t i = 1; sh && i < nsh; i++)
        if (sh[i].type == SHT_DYNAMIC_) {
            *off = sh[i].offset;
            *size = sh[i].size;
            *link = sh[i].link;
            found = 1;
            break;
        }
    for (size_t i = 0; i < nph; i++)
        if (ph[i].type == PT_DYNAMIC_) {
            *off = ph[i].offset;
            *size = ph[i].filesz;
            return 1;
        }
    return found;
}

static int add_needed(struct rd *r, struct dyn *dy, uint64_t val, size_t *cap)
{
    if (dy->n_needed == GV_ELF_MAX_NEEDED)
        return bad(r, "more than %d DT_NEEDED entries", GV_ELF_MAX_NEEDED);
    if (dy->n_needed == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        uint64_t *p = realloc(dy->needed, nc * sizeof *p);
        if (!p)
            return gv_err_set(r->err, GV_E_NOMEM, "%s: out of memory for DT_NEEDED", r->what);
        dy->needed = p;
        *cap = nc;
    }
    dy->needed[dy->n_needed++] = val;
    return GV_OK;
}

static int read_dynamic(struct rd *r, uint64_t off, uint64_t size, struct dyn *dy)
{
    unsigned esz = r->is64 ? 16 : 8;
    size_t cap = 0;
    int rc;
    for (uint64_t i = 0; i + esz <= size; i += esz) {
        uint64_t tag = get_word(r, off + i), val = get_word(r, off + i + esz / 2);
        if (tag == DT_NULL_)
            break;
        switch (tag) {
        case DT_NEEDED_:
            if ((rc = add_needed(r, dy, val, &cap)))
                return rc;
            break;
        case DT_STRTAB_: dy->have_strtab = 1; dy->strtab = val; break;
        case DT_STRSZ_: dy->have_strsz = 1; dy->strsz = val; break;
        case DT_SONAME_:
            if (!dy->have_soname) {
                dy->have_soname = 1;
                dy->soname = val;
            }
            break;
        case DT_RPATH_:
            if (!dy->have_rpath) {
                dy->have_rpath = 1;
                dy->rpath = val;
            }
            break;
        case DT_RUNPATH_:
            if (!dy->have_runpath) {
                dy->have_runpath = 1;
                dy->runpath = val;
            }
            break;
        default: break;
        }
    }
    return GV_OK;
}

static int section_named(const struct gv_elf_info *out, const char *name)
{
    for (size_t i = 1; i < out->n_sections; i++)
        if (strcmp(out->sections[i].name, name) == 0)
            return (int)i;
    return 0;
}

/* The dynamic string table: DT_STRTAB through PT_LOAD, else the section
 * named by the dynamic section's sh_link, else ".dynstr". */
static int find_dynstr(struct rd *r, const struct dyn *dy, const struct phdr *ph, size_t nph,
                       const struct shdr *sh, uint32_t link, const struct gv_elf_info *out,
                       struct strtab *t)
{
    t->label = "dynamic string";
    uint64_t off, avail;
    if (dy->have_strtab && vaddr_to_offset(ph, nph, dy->strtab, &off, &avail)) {
        if (dy->have_strsz && dy->strsz > avail)
            return bad(r, "DT_STRSZ %llu runs past the end of its segment (%llu bytes left)",
                       (unsigned long long)dy->strsz, (unsigned long long)avail);
        t->off = off;
        t->size = dy->have_strsz ? dy->strsz : avail;
        return GV_OK;
    }
    uint32_t idx = 0;
    if (link && link < out->n_sections && sh[link].type != SHT_NOBITS_)
        idx = link;
    else
        idx = (uint32_t)section_named(out, ".dynstr");
    if (idx == 0 || sh[idx].type == SHT_NOBITS_) {
        if (dy->have_strtab)
            return bad(r, "DT_STRTAB 0x%llx is not inside any PT_LOAD segment and there is no .dynstr section",
                       (unsigned long long)dy->strtab);
        return bad(r, "dynamic section has string references but no DT_STRTAB or .dynstr");
    }
    t->off = sh[idx].offset;
    t->size = sh[idx].size;
    return GV_OK;
}

static int dup_string(struct rd *r, const struct strtab *t, uint64_t idx, const char *tag,
                      char **dst)
{
    const char *s = NULL;
    int rc = table_string(r, t, idx, &s);
    if (rc) {
        gv_err_prefix(r->err, "%s", tag);
        return rc;
    }
    *dst = strdup(s);
    if (!*dst)
        return gv_err_set(r->err, GV_E_NOMEM, "%s: out of memory for %s", r->what, tag);
    return GV_OK;
}

static int resolve_strings(struct rd *r, const struct dyn *dy, const struct strtab *t,
                           struct gv_elf_info *out)
{
    int rc = GV_OK;
    if (dy->have_soname && (rc = dup_string(r, t, dy->soname, "DT_SONAME", &out->soname)))
        return rc;
    if (dy->have_rpath && (rc = dup_string(r, t, dy->rpath, "DT_RPATH", &out->rpath)))
        return rc;
    if (dy->have_runpath && (rc = dup_string(r, t, dy->runpath, "DT_RUNPATH", &out->runpath)))
        return rc;
    if (dy->n_needed == 0)
        return GV_OK;
    out->needed = calloc(dy->n_needed, sizeof *out->needed);
    if (!out->needed)
        return gv_err_set(r->err, GV_E_NOMEM, "%s: out of memory for DT_NEEDED", r->what);
    for (size_t i = 0; i < dy->n_needed; i++) {
        if ((rc = dup_string(r, t, dy->needed[i], "DT_NEEDED", &out->needed[i])))
            return rc;
        out->n_needed = i + 1;
    }
    return GV_OK;
}

static int parse_dynamic(struct rd *r, const struct phdr *ph, size_t nph, const struct shdr *sh,
                         uint32_t nsh, struct gv_elf_info *out)
{
    uint64_t off = 0, size = 0;
    uint32_t link = 0;
    if (!find_dynamic(ph, nph, sh, sh ? nsh : 0, &off, &size, &link))
        return GV_OK;
    if (!in_image(r, off, size))
        return bad(r, "dynamic section (offset %llu, size %llu) lies outside the file",
                   (unsigned long long)off, (unsigned long long)size);
    struct dyn dy;
    memset(&dy, 0, sizeof dy);
    int rc = read_dynamic(r, off, size, &dy);
    int any = dy.have_soname || dy.have_rpath || dy.have_runpath || dy.n_needed;
    struct strtab t;
    if (!rc && any)
        rc = find_dynstr(r, &dy, ph, nph, sh, link, out, &t);
    if (!rc && any)
        rc = resolve_strings(r, &dy, &t, out);
    free(dy.needed);
    return rc;
}

/* ---- entry points ---- */

int gv_elf_parse(const uint8_t *data, size_t size, const char *what, struct gv_elf_info *out,
                 struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    struct rd r = {data, size, 0, 0, what ? what : "ELF image", err};
    if (!data && size)
        return gv_err_set(err, GV_E_USAGE, "%s: no data", r.what);
    struct ehdr h;
    memset(&h, 0, sizeof h);
    int rc = read_ident(&r, out);
    if (!rc)
        rc = read_ehdr(&r, out, &h);
    if (!rc)
        rc = apply_extended_counts(&r, &h);
    struct shdr *sh = NULL;
    struct phdr *ph = NULL;
    size_t nph = 0;
    if (!rc)
        rc = load_sections(&r, &h, &sh);
    if (!rc)
        rc = name_sections(&r, &h, sh, out);
    if (!rc)
        rc = load_segments(&r, &h, &ph, &nph);
    if (!rc)
        rc = parse_dynamic(&r, ph, nph, sh, h.shnum, out);
    free(sh);
    free(ph);
    if (rc)
        gv_elf_free(out);
    return rc;
}

void gv_elf_free(struct gv_elf_info *info)
{
    if (!info)
        return;
    free(info->soname);
    free(info->rpath);
    free(info->runpath);
    for (size_t i = 0; i < info->n_needed; i++)
        free(info->needed[i]);
    free(info->needed);
    free(info->sections);
    memset(info, 0, sizeof *info);
}

const struct gv_elf_section *gv_elf_find_section(const struct gv_elf_info *info, const char *name)
{
    for (size_t i = 1; i < info->n_sections; i++)
        if (strcmp(info->sections[i].name, name) == 0)
            return &info->sections[i];
    return NULL;
}

const uint8_t *gv_elf_section_data(const struct gv_elf_section *sec, const uint8_t *data,
                                   size_t size)
{
    if (!sec || !data || sec->type == SHT_NOBITS_ || sec->size == 0)
        return NULL;
    if (sec->offset > size || sec->size > size - sec->offset)
        return NULL;
    return data + sec->offset;
}

int gv_elf_map_file(const char *path, struct gv_elf_map *m, struct gv_err *err)
{
    return gv_elf_map_rooted(NULL, path, m, err);
}

int gv_elf_map_rooted(const char *root, const char *rpath, struct gv_elf_map *m,
                      struct gv_err *err)
{
    m->data = NULL;
    m->size = 0;
    char path[GV_PATH_MAX]; /* for messages */
    if (gv_root_join(path, sizeof path, root, rpath) != 0)
        snprintf(path, sizeof path, "%s", rpath);
    struct stat st;
    if (gv_root_stat(root, rpath, &st, 0) != 0)
        return gv_err_set(err, errno == ENOENT || errno == ENOTDIR ? GV_E_NOTFOUND : GV_E_IO,
                          "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gv_err_set(err, GV_E_FORMAT, "%s: not a regular file", path);
    int fd = gv_root_open(root, rpath, O_RDONLY | O_NONBLOCK | O_NOCTTY, NULL);
    if (fd < 0)
        return gv_err_set(err, GV_E_IO, "%s: open: %s", path, strerror(errno));
    int rc = GV_OK;
    if (fstat(fd, &st) != 0)
        rc = gv_err_set(err, GV_E_IO, "%s: fstat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = gv_err_set(err, GV_E_FORMAT, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > GV_ELF_MAX_FILE)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: %lld bytes, larger than the 4 GiB limit", path,
                        (long long)st.st_size);
    else if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
            rc = gv_err_set(err, GV_E_IO, "%s: mmap: %s", path, strerror(errno));
        else {
            m->data = p;
            m->size = (size_t)st.st_size;
        }
    }
    close(fd);
    return rc;
}

void gv_elf_unmap(struct gv_elf_map *m)
{
    if (m->data)
        munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
}

int gv_elf_read_file(const char *path, struct gv_elf_info *out, struct gv_err *err)
{
    return gv_elf_read_rooted(NULL, path, out, err);
}

int gv_elf_read_rooted(const char *root, const char *path, struct gv_elf_info *out,
                       struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    struct gv_elf_map m;
    int rc = gv_elf_map_rooted(root, path, &m, err);
    if (rc)
        return rc;
    rc = gv_elf_parse(m.data, m.size, path, out, err);
    gv_elf_unmap(&m);
    return rc;
}
