/* The libraries section: every GPU library file (gv_libnames) in the installs
 * of the stacks section, the multiarch directories and torch/lib of each
 * Python environment, with SONAME, DT_NEEDED, version, owning package, size
 * and content hash. Symlinks are folded into the file they name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/elf.h"
#include "env/filehash.h"
#include "env/libnames.h"
#include "env/probe.h"
#include "env/stackscan.h"
#include "kb/hip_versions.h"

/* One directory to scan and what its files belong to. */
struct scan_dir {
    char dir[GV_PATH_MAX];    /* resolved, root-relative */
    char origin[GV_PATH_MAX]; /* install prefix, libdir or site-packages */
    const char *origin_kind;  /* rocm | cuda | python | system; NULL: by vendor */
    const json_t *install;    /* the stacks entry, or NULL */
    const char *release;      /* ROCm release of everything here, or NULL */
    const char *amd_release;  /* ROCm release of AMD files here (torch/lib), or NULL */
    char hip_version[64];     /* torch.version.hip without the git hash (torch/lib) */
    const json_t *wheels;     /* basename -> {version, wheel}, or NULL */
    int has_rocm, has_cuda;   /* multiarch dir: the stacks section found ROCm / CUDA here */
};

struct item {
    char path[GV_PATH_MAX];
    struct scan_dir *sd;
    const struct gv_libname *ln;
    json_t *obj;
    json_t *links;
    struct stat st;
    int stat_ok;
};

struct scan {
    const struct gv_probe_ctx *ctx;
    struct scan_dir *dirs;
    size_t n_dirs, cap_dirs;
    struct item *items;
    size_t n_items, cap_items;
    json_t *skipped;
    json_t *wheel_maps; /* owner of the wheels objects */
    const json_t *installs;
};

static struct scan_dir *find_dir(struct scan *s, const char *dir)
{
    char real[GV_PATH_MAX];
    if (gv_root_realpath(s->ctx->root, dir, real, sizeof real, NULL) != 0)
        return NULL;
    for (size_t i = 0; i < s->n_dirs; i++)
        if (strcmp(s->dirs[i].dir, real) == 0)
            return &s->dirs[i];
    return NULL;
}

/* NULL when dir is not a directory or is already listed (by its resolved path). */
static struct scan_dir *add_dir(struct scan *s, const char *dir, const char *origin,
                                const char *kind)
{
    char real[GV_PATH_MAX];
    if (gv_root_realpath(s->ctx->root, dir, real, sizeof real, NULL) != 0 ||
        !gv_root_is_dir(s->ctx->root, real))
        return NULL;
    if (find_dir(s, real))
        return NULL;
    if (s->n_dirs == s->cap_dirs) {
        size_t nc = s->cap_dirs ? s->cap_dirs * 2 : 16;
        struct scan_dir *nd = realloc(s->dirs, nc * sizeof *nd);
        if (!nd)
            return NULL;
        s->dirs = nd;
        s->cap_dirs = nc;
    }
    struct scan_dir *sd = &s->dirs[s->n_dirs++];
    memset(sd, 0, sizeof *sd);
    snprintf(sd->dir, sizeof sd->dir, "%s", real);
    snprintf(sd->origin, sizeof sd->origin, "%s", origin);
    sd->origin_kind = kind;
    return sd;
}

/* Versions of the GPU library files listed in the RECORD of nvidia / rocm-sdk
 * wheels found in parent (a site-packages or a toolkit's dist-info dir). */
static json_t *wheel_versions(struct scan *s, const char *parent)
{
    json_t *map = json_object();
    json_array_append_new(s->wheel_maps, map);
    json_t *names = gv_list_dir(s->ctx->root, parent, NULL);
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        const char *dn = json_string_value(n);
        size_t dl = strlen(dn);
        if (dl < 11 || strcmp(dn + dl - 10, ".dist-info") != 0 ||
            (strncmp(dn, "nvidia", 6) != 0 && strncmp(dn, "rocm_sdk", 8) != 0))
            continue;
        const char *dash = strchr(dn, '-');
        if (!dash)
            continue;
        char version[128], rel[GV_PATH_MAX];
        snprintf(version, sizeof version, "%.*s", (int)(dn + dl - 10 - dash - 1), dash + 1);
        snprintf(rel, sizeof rel, "%s/%s/RECORD", parent, dn);
        char *data;
        if (gv_root_read_file(s->ctx->root, rel, 16 << 20, &data, NULL, NULL) != GV_OK)
            continue;
        gv_parse_record_libs(data, version, dn, map);
        free(data);
    }
    json_decref(names);
    return map;
}

static void dirs_from_installs(struct scan *s)
{
    size_t i;
    json_t *inst;
    json_array_foreach(s->installs, i, inst) {
        const char *kind = json_string_value(json_object_get(inst, "kind"));
        const char *layout = json_string_value(json_object_get(inst, "layout"));
        const char *prefix = json_string_value(json_object_get(inst, "prefix"));
        const char *site = json_string_value(json_object_get(inst, "site_packages"));
        int python = layout && strcmp(layout, "python") == 0;
        int multi = layout && (!strcmp(layout, "distro") || !strcmp(layout, "driver"));
        const json_t *wheels = NULL;
        if (python && site) {
            wheels = wheel_versions(s, site);
        } else if (layout && strcmp(layout, "toolkit") == 0 && prefix) {
            char d[GV_PATH_MAX];
            snprintf(d, sizeof d, "%s/dist-info", prefix);
            wheels = wheel_versions(s, d);
        }
        size_t k;
        json_t *d;
        json_array_foreach(json_object_get(inst, "libdirs"), k, d) {
            const char *dir = json_string_value(d);
            const char *origin = python ? site : multi ? dir : prefix;
            struct scan_dir *sd =
                add_dir(s, dir, origin ? origin : dir, python ? "python" : multi ? NULL : kind);
            if (multi) { /* a distro ROCm and a CUDA driver may share the directory */
                struct scan_dir *m = sd ? sd : find_dir(s, dir);
                if (m && kind && strcmp(kind, "rocm") == 0)
                    m->has_rocm = 1;
                if (m && kind && strcmp(kind, "cuda") == 0)
                    m->has_cuda = 1;
            }
            if (!sd)
                continue;
            sd->install = inst;
            sd->wheels = wheels;
            if (layout && strcmp(layout, "amd") == 0)
                sd->release = json_string_value(json_object_get(inst, "rocm_release"));
        }
    }
    for (const char *const *dir = gv_multiarch_dirs; *dir; dir++)
        add_dir(s, *dir, *dir, NULL);
}

static void dirs_from_python(struct scan *s, const json_t *python)
{
    size_t i;
    json_t *env;
    json_array_foreach(json_object_get(python, "environments"), i, env) {
        const char *site = json_string_value(json_object_get(env, "site_packages"));
        const json_t *torch = json_object_get(env, "torch");
        if (!site || !torch)
            continue;
        char d[GV_PATH_MAX];
        snprintf(d, sizeof d, "%s/torch/lib", site);
        struct scan_dir *sd = add_dir(s, d, site, "python");
        if (!sd)
            continue;
        sd->amd_release = json_string_value(json_object_get(torch, "rocm_release"));
        const char *hip = json_string_value(json_object_get(torch, "hip"));
        if (hip)
            snprintf(sd->hip_version, sizeof sd->hip_version, "%.*s", (int)strcspn(hip, "-"), hip);
    }
}

static struct item *find_item(struct scan *s, const char *path)
{
    for (size_t i = 0; i < s->n_items; i++)
        if (strcmp(s->items[i].path, path) == 0)
            return &s->items[i];
    return NULL;
}

static struct item *add_item(struct scan *s, const char *path, struct scan_dir *sd,
                             const struct gv_libname *ln)
{
    struct item *it = find_item(s, path);
    if (it)
        return it;
    if (s->n_items == s->cap_items) {
        size_t nc = s->cap_items ? s->cap_items * 2 : 64;
        struct item *ni = realloc(s->items, nc * sizeof *ni);
        if (!ni)
            return NULL;
        s->items = ni;
        s->cap_items = nc;
    }
    it = &s->items[s->n_items++];
    memset(it, 0, sizeof *it);
    snprintf(it->path, sizeof it->path, "%s", path);
    it->sd = sd;
    it->ln = ln;
    it->links = json_array();
    return it;
}

static void skip(struct scan *s, const char *path, const char *reason)
{
    json_t *o = json_object();
    gv_json_set_str(o, "path", path);
    gv_json_set_str(o, "reason", reason);
    json_array_append_new(s->skipped, o);
}

/* A symlink named like a GPU library: fold it into the file it names. */
static void scan_link(struct scan *s, struct scan_dir *sd, const char *path)
{
    char real[GV_PATH_MAX];
    struct gv_err err = {0};
    if (gv_root_realpath(s->ctx->root, path, real, sizeof real, &err) != 0) {
        skip(s, path, err.msg);
        return;
    }
    struct stat st;
    if (gv_root_stat(s->ctx->root, real, &st, 0) != 0) {
        char why[GV_PATH_MAX + 64];
        snprintf(why, sizeof why, "broken symlink: %s does not exist", real);
        skip(s, path, why);
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        skip(s, path, "symlink to something other than a regular file");
        return;
    }
    const char *base = strrchr(real, '/') + 1;
    const struct gv_libname *ln = gv_libname_for_file(base);
    if (!ln)
        ln = gv_libname_for_file(strrchr(path, '/') + 1);
    /* the target may live outside the scanned directories: it is listed too */
    char dir[GV_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", real);
    *strrchr(dir, '/') = '\0';
    struct scan_dir *owner = sd;
    for (size_t i = 0; i < s->n_dirs; i++)
        if (strcmp(s->dirs[i].dir, dir[0] ? dir : "/") == 0)
            owner = &s->dirs[i];
    struct item *it = add_item(s, real, owner, ln);
    if (it)
        json_array_append_new(it->links, json_string(path));
}

static void scan_dir(struct scan *s, struct scan_dir *sd)
{
    json_t *names = gv_list_dir(s->ctx->root, sd->dir, "lib");
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        const char *name = json_string_value(n);
        const struct gv_libname *ln = gv_libname_for_file(name);
        if (!ln)
            continue;
        char path[GV_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", strcmp(sd->dir, "/") ? sd->dir : "", name);
        struct stat st;
        if (gv_root_stat(s->ctx->root, path, &st, 1) != 0) {
            skip(s, path, "cannot stat");
            continue;
        }
        if (S_ISLNK(st.st_mode))
            continue; /* after all real files, so that links find their item */
        if (!S_ISREG(st.st_mode)) {
            skip(s, path, "not a regular file");
            continue;
        }
        add_item(s, path, sd, ln);
    }
    json_array_foreach(names, i, n) {
        const char *name = json_string_value(n);
        if (!gv_libname_for_file(name))
            continue;
        char path[GV_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", strcmp(sd->dir, "/") ? sd->dir : "", name);
        struct stat st;
        if (gv_root_stat(s->ctx->root, path, &st, 1) == 0 &&
            S_ISLNK(st.st_mode))
            scan_link(s, sd, path);
    }
    json_decref(names);
}

static const char *origin_kind(const struct item *it)
{
    if (it->sd->origin_kind)
        return it->sd->origin_kind;
    /* a multiarch directory: ROCm or CUDA when the stacks section found that
     * stack there, else a plain system library */
    if (it->sd->has_rocm && strcmp(it->ln->vendor, "amd") == 0)
        return "rocm";
    if (it->sd->has_cuda && strcmp(it->ln->vendor, "nvidia") == 0)
        return "cuda";
    return "system";
}

static void set_error(json_t *o, const char *msg)
{
    const char *old = json_string_value(json_object_get(o, "error"));
    if (!old) {
        gv_json_set_str(o, "error", msg);
        return;
    }
    char buf[2200];
    snprintf(buf, sizeof buf, "%s; %s", old, msg);
    gv_json_set_str(o, "error", buf);
}

static int is_hip_runtime(const struct gv_libname *ln)
{
    return ln && (!strcmp(ln->name, "hip-runtime") || !strcmp(ln->name, "hiprtc"));
}

/* version + version_source, best source first (see docs/snapshot-schema.md). */
static void set_version(json_t *o, const struct item *it, const char *file, const char *pv)
{
    char v[128];
    const json_t *wheel = it->sd->wheels ? json_object_get(it->sd->wheels, file) : NULL;
    const char *src = NULL;
    char fv[128];
    int parts = gv_version_from_filename(file, fv, sizeof fv);
    /* A full version in the file name (libamdhip64.so.5.7.31921) is the
     * library's own; two parts (Debian's librocblas.so.0.1) are only the
     * SONAME's, so the owning package's version says more there. */
    if (parts >= 3 || (parts == 2 && !pv)) {
        snprintf(v, sizeof v, "%s", fv);
        src = "file name";
    } else if (pv) { /* upstream part of the package version */
        const char *c = strchr(pv, ':');
        snprintf(v, sizeof v, "%s", c ? c + 1 : pv);
        char *dash = strrchr(v, '-');
        if (dash)
            *dash = '\0';
        src = "package";
    } else if (it->sd->hip_version[0] && is_hip_runtime(it->ln)) {
        /* torch/lib/libamdhip64.so: the HIP torch was built with and bundles */
        snprintf(v, sizeof v, "%s", it->sd->hip_version);
        src = "torch/version.py";
    } else if (wheel) {
        snprintf(v, sizeof v, "%s", json_string_value(json_object_get(wheel, "version")));
        src = "wheel";
    }
    if (!src)
        return;
    gv_json_set_str(o, "version", v);
    gv_json_set_str(o, "version_source", src);
    if (wheel && !strcmp(src, "wheel"))
        gv_json_set_str(o, "wheel", json_string_value(json_object_get(wheel, "wheel")));
}

static void set_release(json_t *o, const struct item *it, const char *file)
{
    /* a file no package owns in a package-managed directory may come from
     * another release than its neighbours: only its own name can tell */
    const char *release = json_is_true(json_object_get(o, "unowned")) ? NULL : it->sd->release;
    if (!release && it->ln && strcmp(it->ln->vendor, "amd") == 0)
        release = it->sd->amd_release;
    char fv[128], rel_buf[32];
    if (!release && is_hip_runtime(it->ln) && gv_version_from_filename(file, fv, sizeof fv) >= 3 &&
        gv_hip_to_rocm_release(fv, rel_buf, sizeof rel_buf))
        release = rel_buf;
    gv_json_set_str(o, "rocm_release", release);
}

static void set_elf(json_t *o, const char *root, const char *path, int *ok_out,
                    json_t **needed_out)
{
    struct gv_elf_info info;
    memset(&info, 0, sizeof info);
    struct gv_err err = {0};
    *needed_out = NULL;
    *ok_out = gv_elf_read_rooted(root, path, &info, &err) == GV_OK;
    if (!*ok_out) {
        set_error(o, err.msg);
        return;
    }
    gv_json_set_str(o, "soname", info.soname);
    json_t *needed = json_array();
    for (size_t i = 0; i < info.n_needed; i++)
        json_array_append_new(needed, json_string(info.needed[i]));
    *needed_out = needed;
    gv_elf_free(&info);
}

static void describe(struct scan *s, struct item *it, const struct gv_owner_map *owners,
                     const json_t *versions)
{
    json_t *o = json_object();
    it->obj = o;
    const char *file = strrchr(it->path, '/') + 1;
    gv_json_set_str(o, "name", it->ln ? it->ln->name : NULL);
    gv_json_set_str(o, "path", it->path);
    gv_json_set_str(o, "origin", it->sd->origin);
    gv_json_set_str(o, "origin_kind", it->ln ? origin_kind(it) : "system");
    int elf_ok;
    json_t *needed;
    set_elf(o, s->ctx->root, it->path, &elf_ok, &needed);
    const char *pkg = gv_owner_map_owner(owners, it->path);
    const char *pv = pkg ? json_string_value(json_object_get(versions, pkg)) : NULL;
    set_version(o, it, file, pv);
    it->stat_ok = gv_root_stat(s->ctx->root, it->path, &it->st, 0) == 0;
    if (it->stat_ok)
        json_object_set_new(o, "size", json_integer((json_int_t)it->st.st_size));
    gv_json_set_str(o, "package", pkg);
    gv_json_set_str(o, "package_version", pv);
    if (!pkg && owners) {
        char dir[GV_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", it->path);
        *strrchr(dir, '/') = '\0';
        if (gv_owner_map_manages_dir(owners, dir))
            json_object_set_new(o, "unowned", json_true());
    }
    if (elf_ok)
        json_object_set_new(o, "needed", needed);
    set_release(o, it, file);
}

static int cmp_size_desc(const void *a, const void *b)
{
    const struct gv_hash_job *x = a, *y = b;
    return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* A file whose blocks cover much less than its size is a hole, not a library.
 * (An image's staging tree is judged by its own digests instead, known_digest:
 * its libraries are kept without their offload bundles' code, and the files no
 * snapshot reads not at all.) */
static int is_sparse(const struct stat *st)
{
    return st->st_size > (64 << 20) && (off_t)st->st_blocks * 512 < st->st_size / 8;
}

/* One job per inode: job_of[i] is item i's job, SIZE_MAX for none. */
static size_t plan_jobs(struct scan *s, struct gv_hash_job *jobs, size_t *job_of)
{
    size_t nj = 0;
    for (size_t i = 0; i < s->n_items; i++) {
        struct item *it = &s->items[i];
        job_of[i] = SIZE_MAX;
        if (!it->stat_ok)
            continue;
        char known[65];
        if (s->ctx->known_digest &&
            !s->ctx->known_digest(s->ctx->known_digest_arg, it->path, known)) {
            gv_json_set_str(it->obj, "sha256_skipped", "not read from the image: not hashed");
            continue;
        }
        if (!s->ctx->known_digest && is_sparse(&it->st)) {
            gv_json_set_str(it->obj, "sha256_skipped", "sparse file (mostly holes): not hashed");
            continue;
        }
        for (size_t j = 0; j < i && job_of[i] == SIZE_MAX; j++) {
            struct item *o = &s->items[j];
            if (job_of[j] != SIZE_MAX && o->st.st_dev == it->st.st_dev &&
                o->st.st_ino == it->st.st_ino)
                job_of[i] = job_of[j];
        }
        if (job_of[i] != SIZE_MAX)
            continue;
        jobs[nj].root = s->ctx->root;
        jobs[nj].path = it->path;
        jobs[nj].size = (long long)it->st.st_size;
        job_of[i] = nj++;
    }
    return nj;
}

/* Digests known to the caller (an image's, ctx->known_digest), then from
 * the cache (not for a caller's temporary tree), the rest hashed largest
 * first, one thread per core. */
static void run_jobs(const struct gv_probe_ctx *ctx, struct gv_hash_job *jobs, size_t nj)
{
    struct gv_hash_cache *cache = ctx->known_digest ? NULL : gv_hash_cache_open();
    struct gv_hash_job *todo = calloc(nj ? nj : 1, sizeof *todo);
    if (!todo) {
        gv_hash_cache_close(cache);
        return;
    }
    size_t nt = 0;
    for (size_t i = 0; i < nj; i++) {
        if (ctx->known_digest && ctx->known_digest(ctx->known_digest_arg, jobs[i].path, jobs[i].hex))
            continue;
        if (cache && jobs[i].size >= GV_HASH_CACHE_MIN_SIZE &&
            gv_hash_cache_get(cache, jobs[i].root, jobs[i].path, jobs[i].hex))
            continue;
        todo[nt++] = jobs[i];
    }
    qsort(todo, nt, sizeof *todo, cmp_size_desc);
    gv_filehash_run(todo, nt, gv_filehash_threads());
    for (size_t t = 0; t < nt; t++) {
        for (size_t i = 0; i < nj; i++)
            if (jobs[i].path == todo[t].path)
                jobs[i] = todo[t];
        if (cache && todo[t].rc == 0 && todo[t].size >= GV_HASH_CACHE_MIN_SIZE)
            gv_hash_cache_put(cache, todo[t].root, todo[t].path, todo[t].hex);
    }
    free(todo);
    gv_hash_cache_close(cache);
}

/* Hashes each inode once and puts the digests (or errors) on the items. */
static void hash_items(struct scan *s)
{
    size_t n = s->n_items ? s->n_items : 1;
    struct gv_hash_job *jobs = calloc(n, sizeof *jobs);
    size_t *job_of = calloc(n, sizeof *job_of);
    if (jobs && job_of) {
        size_t nj = plan_jobs(s, jobs, job_of);
        run_jobs(s->ctx, jobs, nj);
        for (size_t i = 0; i < s->n_items; i++) {
            if (job_of[i] == SIZE_MAX)
                continue;
            struct gv_hash_job *j = &jobs[job_of[i]];
            if (j->rc == 0 && j->hex[0])
                gv_json_set_str(s->items[i].obj, "sha256", j->hex);
            else if (j->rc)
                set_error(s->items[i].obj, j->err);
        }
    }
    free(jobs);
    free(job_of);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

static json_t *sorted_links(json_t *links)
{
    size_t n = json_array_size(links);
    json_t **v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++)
        v[i] = json_array_get(links, i);
    if (v)
        qsort(v, n, sizeof *v, cmp_str);
    json_t *out = json_array();
    for (size_t i = 0; v && i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    return out;
}

json_t *gv_probe_libraries(const struct gv_probe_ctx *ctx, const json_t *stacks,
                           const json_t *packages, const json_t *python)
{
    if (!json_is_true(json_object_get(stacks, "collected")))
        return gv_section_missing("ELF headers", "the stacks section was not collected");
    struct scan s = {.ctx = ctx, .skipped = json_array(), .wheel_maps = json_array(),
                     .installs = json_object_get(stacks, "installs")};
    dirs_from_installs(&s);
    dirs_from_python(&s, python);
    for (size_t i = 0; i < s.n_dirs; i++)
        scan_dir(&s, &s.dirs[i]);
    const char *vsource;
    json_t *versions = gv_pkg_versions(packages, ctx->root, &vsource);
    struct gv_owner_map *owners = gv_owner_map_load(ctx->root);
    for (size_t i = 0; i < s.n_items; i++)
        describe(&s, &s.items[i], owners, versions);
    if (ctx->hash_files)
        hash_items(&s);
    json_t *items = json_array();
    for (size_t i = 0; i < s.n_items; i++) {
        struct item *it = &s.items[i];
        if (json_array_size(it->links))
            json_object_set_new(it->obj, "links", sorted_links(it->links));
        json_decref(it->links);
        json_array_append_new(items, it->obj);
    }
    json_t *sec = gv_section_new("ELF headers, dpkg file lists, wheel RECORDs");
    json_t *scanned = json_array();
    for (size_t i = 0; i < s.n_dirs; i++)
        json_array_append_new(scanned, json_string(s.dirs[i].dir));
    json_object_set_new(sec, "scanned_dirs", scanned);
    json_object_set_new(sec, "items", items);
    json_object_set_new(sec, "skipped", s.skipped);
    json_decref(s.wheel_maps);
    json_decref(versions);
    gv_owner_map_free(owners);
    free(s.items);
    free(s.dirs);
    return sec;
}
