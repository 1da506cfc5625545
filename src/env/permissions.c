/* permissions: who runs gpuvet (uid, groups), whether the render and video
 * groups exist and include this user, and the GPU device nodes' modes,
 * owners and accessibility. Under --root only the group file is read: the
 * user and the device nodes belong to the running system. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define ID_FILE_MAX (16 << 20)
#define MAX_GROUPS 1024
#define MAX_DEVICES 256

struct ids {
    char *group;  /* /etc/group contents, NULL when unreadable */
    char *passwd; /* /etc/passwd contents */
};

/* Name of numeric id in a colon file (name:x:id:...), into out; 0 if found. */
static int name_of(const char *file, long id, char *out, size_t outsz)
{
    for (const char *l = file; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        const char *c1 = memchr(l, ':', n);
        const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - l)) : NULL;
        if (c2) {
            char *end;
            long v = strtol(c2 + 1, &end, 10);
            if (end != c2 + 1 && (*end == ':' || end == l + n) && v == id &&
                (size_t)(c1 - l) < outsz) {
                memcpy(out, l, (size_t)(c1 - l));
                out[c1 - l] = '\0';
                return 0;
            }
        }
        l = nl ? nl + 1 : NULL;
    }
    return -1;
}

/* gid of the named group, -1 when absent. */
static long gid_of(const char *group, const char *name)
{
    size_t nn = strlen(name);
    for (const char *l = group; l && *l;) {
        const char *nl = strchr(l, '\n');
        if (!strncmp(l, name, nn) && l[nn] == ':') {
            const char *c2 = strchr(l + nn + 1, ':');
            if (c2 && (!nl || c2 < nl))
                return strtol(c2 + 1, NULL, 10);
        }
        l = nl ? nl + 1 : NULL;
    }
    return -1;
}

static json_t *id_name(const char *file, long id)
{
    char name[256];
    if (file && name_of(file, id, name, sizeof name) == 0)
        return gv_json_str(name);
    snprintf(name, sizeof name, "%ld", id);
    return json_string(name);
}

/* Uid and the group ids (primary first) from /proc/self/status. */
static int self_ids(const struct gv_probe_ctx *ctx, long *uid, long *gids, size_t *ngids)
{
    char *data;
    if (gv_sys_read(ctx, "/proc/self/status", 1 << 20, &data, NULL, NULL))
        return -1;
    *uid = -1;
    *ngids = 0;
    for (char *save, *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(l, "Uid:", 4))
            *uid = strtol(l + 4, NULL, 10);
        else if (!strncmp(l, "Gid:", 4) && *ngids < MAX_GROUPS)
            gids[(*ngids)++] = strtol(l + 4, NULL, 10);
        else if (!strncmp(l, "Groups:", 7))
            for (char *s2, *t = strtok_r(l + 7, " \t", &s2); t && *ngids < MAX_GROUPS;
                 t = strtok_r(NULL, " \t", &s2)) {
                long g = strtol(t, NULL, 10);
                int dup = 0;
                for (size_t i = 0; i < *ngids; i++)
                    dup |= gids[i] == g;
                if (!dup)
                    gids[(*ngids)++] = g;
            }
    }
    free(data);
    return *uid < 0 ? -1 : 0;
}

static json_t *group_info(const struct ids *ids, const char *name, const long *gids, size_t ngids,
                          int have_user)
{
    json_t *o = json_object();
    long gid = ids->group ? gid_of(ids->group, name) : -1;
    json_object_set_new(o, "exists", json_boolean(gid >= 0));
    if (gid >= 0)
        json_object_set_new(o, "gid", json_integer(gid));
    if (have_user) {
        int member = 0;
        for (size_t i = 0; gid >= 0 && i < ngids; i++)
            member |= gids[i] == gid;
        json_object_set_new(o, "member", json_boolean(member));
    }
    return o;
}

static json_t *device_json(const struct ids *ids, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    json_t *o = json_object();
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
    json_object_set_new(o, "path", gv_json_str(path));
    json_object_set_new(o, "type", json_string(S_ISCHR(st.st_mode) ? "char" : S_ISBLK(st.st_mode) ? "block" : "other"));
    json_object_set_new(o, "mode", json_string(mode));
    json_object_set_new(o, "owner", id_name(ids->passwd, (long)st.st_uid));
    json_object_set_new(o, "group", id_name(ids->group, (long)st.st_gid));
    json_object_set_new(o, "readable", json_boolean(access(path, R_OK) == 0));
    json_object_set_new(o, "writable", json_boolean(access(path, W_OK) == 0));
    return o;
}

static void add_matching(json_t *arr, const struct ids *ids, const char *dir, const char *prefix)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        if (!strncmp(names[i]->d_name, prefix, strlen(prefix)) && json_array_size(arr) < MAX_DEVICES) {
            char p[GV_PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", dir, names[i]->d_name);
            struct stat st;
            json_t *o = lstat(p, &st) == 0 && !S_ISDIR(st.st_mode) ? device_json(ids, p) : NULL;
            if (o)
                json_array_append_new(arr, o);
        }
        free(names[i]);
    }
    if (n >= 0)
        free(names);
}

/* /dev/kfd, /dev/dri/renderD*, /dev/nvidia* of the running system. */
static json_t *devices(const struct ids *ids)
{
    json_t *arr = json_array();
    json_t *kfd = device_json(ids, "/dev/kfd");
    if (kfd)
        json_array_append_new(arr, kfd);
    add_matching(arr, ids, "/dev/dri", "renderD");
    add_matching(arr, ids, "/dev", "nvidia");
    return arr;
}

json_t *gv_probe_permissions(const struct gv_probe_ctx *ctx)
{
    struct ids ids = {NULL, NULL};
    gv_sys_read(ctx, "/etc/group", ID_FILE_MAX, &ids.group, NULL, NULL);
    gv_sys_read(ctx, "/etc/passwd", ID_FILE_MAX, &ids.passwd, NULL, NULL);
    json_t *s = gv_section_new(ctx->live ? "/proc/self/status, /etc/group, /etc/passwd, /dev"
                                         : "/etc/group");
    json_t *nc = json_object();
    long uid = -1, *gids = calloc(MAX_GROUPS, sizeof *gids);
    size_t ngids = 0;
    int have_user = ctx->live && gids && self_ids(ctx, &uid, gids, &ngids) == 0;
    if (have_user) {
        json_object_set_new(s, "user", id_name(ids.passwd, uid));
        json_object_set_new(s, "uid", json_integer(uid));
        json_t *g = json_array();
        for (size_t i = 0; i < ngids; i++)
            json_array_append_new(g, id_name(ids.group, gids[i]));
        json_object_set_new(s, "groups", g);
    } else {
        json_object_set_new(nc, "user", json_string(ctx->live ? "/proc/self/status unreadable"
                                                              : "the user is the running "
                                                                "system's; not read for --root"));
    }
    if (!ids.group)
        json_object_set_new(nc, "groups", json_string("/etc/group unreadable or missing"));
    if (ids.group) { /* unknown otherwise: named in not_collected */
        json_object_set_new(s, "render_group", group_info(&ids, "render", gids, ngids, have_user));
        json_object_set_new(s, "video_group", group_info(&ids, "video", gids, ngids, have_user));
    }
    if (ctx->live)
        json_object_set_new(s, "devices", devices(&ids));
    else
        json_object_set_new(nc, "devices", json_string("device nodes belong to the running "
                                                       "system; not read for --root"));
    if (json_object_size(nc))
        json_object_set_new(s, "not_collected", nc);
    else
        json_decref(nc);
    free(gids);
    free(ids.group);
    free(ids.passwd);
    return s;
}
