/* The persistent digest cache of gv_filehash (see filehash.h). */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/filehash.h"

#define CACHE_MAX_ENTRIES 20000

struct gv_hash_cache {
    char path[GV_PATH_MAX];
    json_t *entries; /* real path -> {dev, ino, size, mtime_ns, ctime_ns, sha256} */
    json_t *used;    /* keys looked up or stored in this run */
    json_t *added;   /* entries stored in this run (merged into the file at close) */
};

/* The entries of the cache file, or an empty object. */
static json_t *read_entries(const char *path)
{
    json_t *doc = NULL, *e = NULL;
    if (gv_is_file(path) && gv_json_read_file(path, 64 << 20, &doc, NULL) == 0 &&
        json_is_object(json_object_get(doc, "entries")))
        e = json_incref(json_object_get(doc, "entries"));
    json_decref(doc);
    return e ? e : json_object();
}

struct gv_hash_cache *gv_hash_cache_open(void)
{
    const char *off = getenv("GPUVET_HASH_CACHE");
    if (off && strcmp(off, "0") == 0)
        return NULL;
    struct gv_hash_cache *c = calloc(1, sizeof *c);
    char dir[GV_PATH_MAX];
    if (!c || gv_cache_dir(dir, sizeof dir, NULL, NULL) != 0 ||
        snprintf(c->path, sizeof c->path, "%s/sha256-cache.json", dir) >= (int)sizeof c->path) {
        free(c);
        return NULL;
    }
    c->entries = read_entries(c->path);
    c->used = json_object();
    c->added = json_object();
    return c;
}

static json_t *stat_key(const struct stat *st)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "dev", (json_int_t)st->st_dev, "ino",
                     (json_int_t)st->st_ino, "size", (json_int_t)st->st_size, "mtime_ns",
                     (json_int_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                     "ctime_ns",
                     (json_int_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec);
}

static int same_key(const json_t *entry, const json_t *key)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)key, k, v) {
        json_t *e = json_object_get(entry, k);
        if (!json_is_integer(e) || json_integer_value(e) != json_integer_value(v))
            return 0;
    }
    return 1;
}

/* The host path that path inside root resolves to (the cache's key), and
 * its stat, both through the root's resolver. 0 on success. */
static int resolve_key(const char *root, const char *path, char *real, size_t realsz,
                       struct stat *st)
{
    if (!root || !root[0] || !strcmp(root, "/"))
        return realpath(path, real) && stat(real, st) == 0 ? 0 : -1;
    char rel[GV_PATH_MAX];
    if (gv_root_realpath(root, path, rel, sizeof rel, NULL) != 0 ||
        gv_root_join(real, realsz, root, rel) != 0 || gv_root_stat(root, rel, st, 0) != 0)
        return -1;
    return 0;
}

int gv_hash_cache_get(struct gv_hash_cache *c, const char *root, const char *path, char out[65])
{
    char real[PATH_MAX];
    struct stat st;
    if (!c || resolve_key(root, path, real, sizeof real, &st) != 0)
        return 0;
    json_t *e = json_object_get(c->entries, real);
    json_t *key = stat_key(&st);
    const char *hex = json_string_value(json_object_get(e, "sha256"));
    int hit = e && key && hex && strlen(hex) == 64 && same_key(e, key);
    json_decref(key);
    if (!hit)
        return 0;
    memcpy(out, hex, 65);
    json_object_set_new(c->used, real, json_true());
    return 1;
}

void gv_hash_cache_put(struct gv_hash_cache *c, const char *root, const char *path,
                       const char hex[65])
{
    char real[PATH_MAX];
    struct stat st;
    if (!c || resolve_key(root, path, real, sizeof real, &st) != 0)
        return;
    json_t *key = stat_key(&st);
    if (!key)
        return;
    json_object_set_new(key, "sha256", json_string(hex));
    json_object_set(c->added, real, key);
    json_object_set_new(c->entries, real, key);
    json_object_set_new(c->used, real, json_true());
}

/* Writes this run's entries into the cache file. Other gpuvet processes may be
 * doing the same: under an exclusive lock on PATH.lock the file is read again,
 * this run's entries are merged into what it holds now, and it is replaced
 * atomically, so no process's entries are lost and the file is always whole. */
static void store(struct gv_hash_cache *c)
{
    gv_test_stop_point("hashcache-store", c->path);
    char lock[GV_PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s.lock", c->path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        if (fd >= 0)
            close(fd);
        return; /* the cache only saves time: without the lock, leave it as it is */
    }
    json_t *now = read_entries(c->path);
    const char *k;
    json_t *v;
    json_object_foreach(c->added, k, v)
        json_object_set(now, k, v);
    /* bounded: when too big, keep only what this run used */
    if (json_object_size(now) > CACHE_MAX_ENTRIES) {
        json_t *kept = json_object();
        json_object_foreach(now, k, v)
            if (json_object_get(c->used, k))
                json_object_set(kept, k, v);
        json_decref(now);
        now = kept;
    }
    json_t *doc = json_pack("{s:s, s:i, s:o}", "schema", "gpuvet.sha256-cache",
                            "schema_version", 1, "entries", now);
    char *text = doc ? gv_json_dumps(doc, JSON_COMPACT) : NULL;
    if (text)
        gv_write_atomic(c->path, text, strlen(text), 0600, NULL);
    free(text);
    json_decref(doc);
    close(fd); /* releases the lock */
}

void gv_hash_cache_close(struct gv_hash_cache *c)
{
    if (!c)
        return;
    if (json_object_size(c->added))
        store(c);
    json_decref(c->entries);
    json_decref(c->used);
    json_decref(c->added);
    free(c);
}
