/* Images for the commands (docs/image.md): the snapshot of an image and its
 * identity, shared by snapshot, diff, doctor, plan and verify; the cached
 * rootfs that check, ab and torch run the PyTorch worker in (--image). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "cli/cli.h"
#include "env/ldcache.h"
#include "env/probe.h"
#include "image/image.h"
#include "image/tree.h"

static int tree_digest(const void *arg, const char *path, char hex[65])
{
    return gv_image_tree_digest(arg, path, hex);
}

/* Every string of v that names a path under the staging tree (a reason such
 * as "TREE/proc/cpuinfo: ..."), rewritten as the path inside the image: the
 * temporary directory is no fact of the image, and two snapshots of one
 * image must not differ by it. */
static void strip_tree(json_t *v, const char *tree)
{
    size_t n = strlen(tree), i;
    const char *k;
    json_t *x;
    if (json_is_object(v)) {
        json_object_foreach(v, k, x)
            strip_tree(x, tree);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x)
            strip_tree(x, tree);
    } else if (json_is_string(v) && n && strstr(json_string_value(v), tree)) {
        const char *s = json_string_value(v);
        size_t len = strlen(s), o = 0;
        char *out = malloc(len + 1);
        if (!out)
            return;
        for (const char *p = s; *p;) {
            if (!strncmp(p, tree, n))
                p += n;
            else
                out[o++] = *p++;
        }
        out[o] = '\0';
        json_string_set(v, out);
        free(out);
    }
}

/* The snapshot's own fields that would name the staging tree: the root is the
 * reference the user gave, and the variables are the config's Env. */
static void describe_as_image(json_t *doc, const char *ref, const char *tree)
{
    strip_tree(doc, tree);
    json_object_set_new(doc, "root", json_string(ref));
    json_t *env = json_object_get(doc, "environment");
    if (json_is_object(env))
        json_object_set_new(env, "source", json_string("the image config's Env (what the "
                                                       "container starts with), "
                                                       "/etc/profile.d/*.sh of the image"));
}

int cli_image_snapshot(const char *ref, int hash, json_t **doc, struct gv_err *err)
{
    *doc = NULL;
    struct gv_image *img;
    int rc = gv_image_open(ref, &img, err);
    if (rc)
        return rc;
    struct gv_image_tree *t;
    rc = gv_image_stage(img, GV_STAGE_SNAPSHOT, NULL, &t, err);
    if (rc) {
        gv_image_close(img);
        return rc;
    }
    struct gv_probe_ctx ctx = {.root = gv_image_tree_root(t), .live = 0,
                               .envp = gv_image_env(img), .envp_of_root = 1,
                               .hash_files = hash,
                               .known_digest = tree_digest, .known_digest_arg = t};
    rc = gv_snapshot_collect(&ctx, doc, err);
    if (!rc)
        rc = gv_image_annotate(*doc, img, t, err);
    if (!rc)
        describe_as_image(*doc, ref, gv_image_tree_root(t));
    else {
        json_decref(*doc);
        *doc = NULL;
    }
    gv_image_tree_free(t, 0);
    gv_image_close(img);
    return rc;
}

int cli_image_identity(const char *ref, json_t **image, struct gv_err *err)
{
    *image = NULL;
    struct gv_image *img;
    int rc = gv_image_open(ref, &img, err);
    if (rc)
        return rc;
    *image = gv_image_describe(img);
    gv_image_close(img);
    return *image ? GV_OK : gv_err_set(err, GV_E_NOMEM, "%s: out of memory", ref);
}

/* ---- running inside an image (docs/image.md, "Running inside an image") ---- */

#define RUN_WAY "isolated root (no container engine)"
#define HOST_DRIVER_DIR "/.gpuvet/host-driver"

/* The host driver's user-space libraries an NVIDIA container gets (as the
 * NVIDIA container toolkit binds them: libnvidia-container's driver list). */
static const char *const host_driver_libs[] = {"libcuda.so.1", "libnvidia-ml.so.1",
                                               "libnvidia-ptxjitcompiler.so.1",
                                               "libnvidia-nvvm.so.4"};
#define N_HOST_DRIVER_LIBS (sizeof host_driver_libs / sizeof host_driver_libs[0])

/* The hex of the manifest digest (the config digest for a legacy docker-archive):
 * the name of the image's rootfs in the cache; NULL when it is not sha256 hex. */
static const char *rootfs_key(const struct gv_image *img)
{
    const char *d = gv_image_manifest_digest(img);
    if (!d || !d[0])
        d = gv_image_config_digest(img);
    if (!d || strncmp(d, "sha256:", 7) != 0 || strlen(d + 7) != 64)
        return NULL;
    for (const char *c = d + 7; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return NULL;
    return d + 7;
}

/* The directory name under at, made when missing; a link or a file there (the
 * image made it) is refused. An open descriptor, or -1 with errno set. */
static int own_dir_at(int at, const char *name)
{
    if (mkdirat(at, name, 0755) != 0 && errno != EEXIST)
        return -1;
    return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* /proc, /sys and /dev where the image has none, as a container runtime makes
 * them: the worker binds the host's onto them (a PyTorch import opens
 * /dev/urandom). What the image put there itself stays as it is. */
static void add_mount_points(int rfd)
{
    static const char *const dirs[] = {"proc", "sys", "dev"};
    for (size_t i = 0; rfd >= 0 && i < sizeof dirs / sizeof dirs[0]; i++)
        (void)mkdirat(rfd, dirs[i], 0755);
}

/* gpuvet's own part of the root: /.gpuvet/host-driver with an empty placeholder
 * per host driver library, for the worker to bind the host's files onto, and the
 * mount points of /proc, /sys and /dev. */
static int add_placeholders(const char *root, struct gv_err *err)
{
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    add_mount_points(rfd);
    int gfd = rfd >= 0 ? own_dir_at(rfd, ".gpuvet") : -1;
    int hfd = gfd >= 0 ? own_dir_at(gfd, "host-driver") : -1;
    int rc = hfd < 0 ? gv_err_set(err, GV_E_IO, "%s" HOST_DRIVER_DIR ": %s (the image has its "
                                  "own /.gpuvet that is not a directory?)", root, strerror(errno))
                     : GV_OK;
    for (size_t i = 0; !rc && i < N_HOST_DRIVER_LIBS; i++) {
        int fd = openat(hfd, host_driver_libs[i], O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                        0644);
        if (fd < 0)
            rc = gv_err_set(err, GV_E_IO, "%s" HOST_DRIVER_DIR "/%s: %s", root,
                            host_driver_libs[i], strerror(errno));
        else
            close(fd);
    }
    if (hfd >= 0)
        close(hfd);
    if (gfd >= 0)
        close(gfd);
    if (rfd >= 0)
        close(rfd);
    return rc;
}

/* The config's Env, NUL-separated NAME=VALUE, for $GPUVET_PYTHON_ENV_FILE. */
static int write_env(const char *path, char *const *env, struct gv_err *err)
{
    size_t len = 0;
    for (size_t i = 0; env && env[i]; i++)
        len += strlen(env[i]) + 1;
    char *buf = malloc(len ? len : 1);
    if (!buf)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", path);
    size_t at = 0;
    for (size_t i = 0; env && env[i]; i++) {
        memcpy(buf + at, env[i], strlen(env[i]) + 1);
        at += strlen(env[i]) + 1;
    }
    int rc = gv_write_atomic(path, buf, len, 0600, err);
    free(buf);
    return rc;
}

/* Unpacks img into dir: every layer staged in full beside it, gpuvet's
 * placeholders added, the env file written, the tree renamed into place
 * (rename(2) of the directory), the marker written last. */
static int unpack(const struct gv_image *img, const char *dir, struct gv_err *err)
{
    char parent[PATH_MAX], path[PATH_MAX + 16];
    int rc = gv_cache_dir(parent, sizeof parent, "images", err);
    if (rc)
        return rc;
    if (gv_exists(dir)) { /* a gpuvet killed between the rename and the marker */
        char up[PATH_MAX];
        snprintf(up, sizeof up, "%s", dir);
        char *slash = strrchr(up, '/');
        *slash = '\0';
        int fd = open(up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || gv_tree_rm_at(fd, slash + 1) != 0) {
            if (fd >= 0)
                close(fd);
            return gv_err_set(err, GV_E_IO, "%s: an unfinished rootfs that cannot be removed",
                              dir);
        }
        close(fd);
    }
    struct gv_image_tree *t;
    rc = gv_image_stage(img, GV_STAGE_FULL, parent, &t, err);
    if (rc)
        return rc;
    rc = add_placeholders(gv_image_tree_root(t), err);
    snprintf(path, sizeof path, "%s.env", dir);
    if (!rc)
        rc = write_env(path, gv_image_env(img), err);
    if (!rc && rename(gv_image_tree_root(t), dir) != 0)
        rc = gv_err_set(err, GV_E_IO, "renaming %s to %s: %s", gv_image_tree_root(t), dir,
                        strerror(errno));
    gv_image_tree_free(t, !rc);
    snprintf(path, sizeof path, "%s.complete", dir);
    if (!rc)
        rc = gv_write_atomic(path, "complete\n", 9, 0644, err);
    return rc;
}

static int is_complete(const char *dir)
{
    char marker[PATH_MAX + 16];
    snprintf(marker, sizeof marker, "%s.complete", dir);
    return gv_is_file(marker) && gv_is_dir(dir);
}

/* dir complete, or made so under the cache's lock (a second gpuvet waits,
 * then finds the first one's). *reused: it was there. */
static int ensure_rootfs(const struct gv_image *img, const char *base, const char *dir,
                         int *reused, struct gv_err *err)
{
    *reused = is_complete(dir);
    if (*reused)
        return GV_OK;
    char lock[PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s/.lock", base);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return gv_err_set(err, GV_E_IO, "%s: %s", lock, strerror(e));
    }
    *reused = is_complete(dir);
    int rc = *reused ? GV_OK : unpack(img, dir, err);
    close(fd);
    return rc;
}

static json_t *run_section(const char *ref, const struct gv_image *img, const char *dir,
                           int reused)
{
    json_t *o = json_object();
    json_object_set_new(o, "reference", json_string(ref));
    json_object_set_new(o, "manifest_digest", json_string(gv_image_manifest_digest(img)));
    json_object_set_new(o, "config_digest", json_string(gv_image_config_digest(img)));
    json_object_set_new(o, "run", json_string(RUN_WAY));
    json_object_set_new(o, "rootfs", json_string(dir));
    json_object_set_new(o, "reused", json_boolean(reused));
    return o;
}

int cli_image_rootfs(const char *ref, char *root, size_t rootsz, json_t **image,
                     struct gv_err *err)
{
    *image = NULL;
    root[0] = '\0';
    struct gv_image *img;
    int rc = gv_image_open(ref, &img, err);
    if (rc)
        return rc;
    const char *key = rootfs_key(img);
    char base[PATH_MAX], dir[PATH_MAX + 80];
    if (!key)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: no sha256 digest to name its rootfs by", ref);
    if (!rc)
        rc = gv_cache_dir(base, sizeof base, "images/rootfs", err);
    int reused = 0;
    if (!rc) {
        snprintf(dir, sizeof dir, "%s/%s", base, key);
        rc = ensure_rootfs(img, base, dir, &reused, err);
    }
    if (!rc && (size_t)snprintf(root, rootsz, "%s", dir) >= rootsz)
        rc = gv_err_set(err, GV_E_USAGE, "%s: path too long", dir);
    if (!rc)
        *image = run_section(ref, img, dir, reused);
    if (rc)
        gv_err_prefix(err, "--image %s", ref);
    gv_image_close(img);
    return rc;
}

/* The host's path of each driver library the loader cache names, colon-separated
 * into out ("" when none: no NVIDIA driver here). */
static void find_host_driver(char *out, size_t n)
{
    out[0] = '\0';
    char *data = NULL;
    size_t len = 0;
    struct gv_err e = {0};
    struct gv_ldcache c = {0};
    if (gv_read_file("/etc/ld.so.cache", 64u << 20, &data, &len, &e) != GV_OK)
        return;
    if (gv_ldcache_parse((const uint8_t *)data, len, &c, &e) == GV_OK) {
        for (size_t i = 0; i < N_HOST_DRIVER_LIBS; i++) {
            const char *p = gv_ldcache_lookup(&c, host_driver_libs[i], gv_ldcache_native_flags());
            size_t used = strlen(out);
            if (p && !strchr(p, ':') && used + strlen(p) + 2 < n)
                snprintf(out + used, n - used, "%s%s", used ? ":" : "", p);
        }
        gv_ldcache_free(&c);
    }
    free(data);
}

int cli_image_python(const char *ref, int want_gpu, char *root, size_t rootsz, json_t **image,
                     struct gv_err *err)
{
    int rc = cli_image_rootfs(ref, root, rootsz, image, err);
    if (rc)
        return rc;
    char envfile[PATH_MAX + 8];
    snprintf(envfile, sizeof envfile, "%s.env", root);
    setenv("GPUVET_PYTHON_ENV_FILE", envfile, 1);
    unsetenv("GPUVET_PYTHON_HOST_DRIVER");
    int reused = json_is_true(json_object_get(*image, "reused"));
    fprintf(stderr, "gpuvet: image %s: %s %s; the worker runs there, an " RUN_WAY "\n", ref,
            reused ? "reusing its unpacked rootfs" : "unpacked into", root);
    if (!want_gpu)
        return GV_OK;
    char libs[4 * PATH_MAX];
    find_host_driver(libs, sizeof libs);
    if (libs[0]) {
        setenv("GPUVET_PYTHON_HOST_DRIVER", libs, 1);
        json_object_set_new(*image, "host_driver", json_string(libs));
    } else {
        const char *note = "no host driver found (libcuda.so.1 is not in this machine's "
                           "/etc/ld.so.cache): the image's own libraries, if any, are used";
        json_object_set_new(*image, "host_driver_note", json_string(note));
        fprintf(stderr, "gpuvet: image %s: %s\n", ref, note);
    }
    return GV_OK;
}
