/* The image reader's formats (src/image: ref.c, oci.c, tarindex.c, docker.c,
 * open.c, describe.c) on a tiny image built with real tools
 * (tests/fixtures/tiny-image.sh: umoci, skopeo): every form opens, and its
 * digests, diff_ids, tags and layers are what the files say (read here with
 * jq, sha256sum, tar and skopeo, not with the code under test); bad inputs
 * give an error naming the culprit. Skips (77) without umoci, skopeo or jq. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "image/format.h"
#include "image/image.h"
#include "t.h"
#include "tools.h"

static char dir[512];

/* stdout of a shell command, its trailing newline removed; "" on failure. */
static char out_buf[8][4096];
static int out_next;
static const char *sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *s = tl_capture("cd '%s' && %s", dir, cmd);
    char *o = out_buf[out_next++ % 8];
    snprintf(o, 4096, "%s", s ? s : "");
    free(s);
    size_t n = strlen(o);
    while (n && (o[n - 1] == '\n' || o[n - 1] == ' '))
        o[--n] = '\0';
    return o;
}

static struct gv_image *open_ok(const char *rel)
{
    char ref[1024];
    snprintf(ref, sizeof ref, "%s/%s", dir, rel);
    struct gv_image *img = NULL;
    struct gv_err err = {0};
    int rc = gv_image_open(ref, &img, &err);
    if (rc != GV_OK)
        fprintf(stderr, "open %s: %s\n", rel, err.msg);
    T_EQ_INT(rc, GV_OK);
    return img;
}

/* Opening rel fails with a message holding each of the words given. */
static void open_fails(const char *rel, const char *w1, const char *w2)
{
    char ref[1024];
    snprintf(ref, sizeof ref, "%s/%s", dir, rel);
    struct gv_image *img = NULL;
    struct gv_err err = {0};
    int rc = gv_image_open(ref, &img, &err);
    T_CHECK(rc != GV_OK);
    T_CHECK(img == NULL);
    fprintf(stderr, "  %s: %s\n", rel, err.msg);
    T_CHECK(strstr(err.msg, w1) != NULL);
    if (w2)
        T_CHECK(strstr(err.msg, w2) != NULL);
    gv_image_close(img);
}

static int has_tag(const json_t *sec, const char *tag)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(sec, "tags"), i, v) if (!strcmp(json_string_value(v), tag))
        return 1;
    return 0;
}

/* Layer i read back whole: its sha256 equals want. */
static void layer_reads_back(const struct gv_image *img, size_t i, const char *want)
{
    struct gv_blob *b;
    struct gv_err err = {0};
    T_EQ_INT(gv_image_layer_open(img, i, &b, &err), GV_OK);
    if (!b)
        return;
    struct gv_sha256 s;
    gv_sha256_init(&s);
    unsigned char buf[8192];
    ssize_t r;
    long long total = 0;
    while ((r = gv_blob_read(b, buf, sizeof buf, &err)) > 0) {
        gv_sha256_update(&s, buf, (size_t)r);
        total += r;
    }
    T_EQ_INT(r, 0);
    T_EQ_INT(total, gv_image_layer(img, i)->size);
    uint8_t d[32];
    char hex[65], got[80];
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, hex);
    snprintf(got, sizeof got, "sha256:%s", hex);
    T_EQ_STR(got, want);
    gv_blob_close(b);
}

/* The layers' digests and diff_ids against the manifest and config files
 * (jq over the blobs, named by their digests). */
static void layers_match(const struct gv_image *img, const char *blobdir, const char *manifest,
                         const char *config)
{
    int n = atoi(sh("jq '.layers|length' %s/%s", blobdir, manifest + 7));
    T_EQ_INT(gv_image_layer_count(img), n);
    for (int i = 0; i < n && (size_t)i < gv_image_layer_count(img); i++) {
        const struct gv_image_layer *l = gv_image_layer(img, (size_t)i);
        T_EQ_STR(l->digest, sh("jq -r '.layers[%d].digest' %s/%s", i, blobdir, manifest + 7));
        T_EQ_STR(l->media_type,
                 sh("jq -r '.layers[%d].mediaType' %s/%s", i, blobdir, manifest + 7));
        T_EQ_STR(l->diff_id,
                 sh("jq -r '.rootfs.diff_ids[%d]' %s/%s", i, blobdir, config + 7));
        layer_reads_back(img, (size_t)i, l->digest);
    }
}

static void test_layout(void)
{
    struct gv_image *img = open_ok("layout:v2");
    if (!img)
        return;
    T_EQ_INT(gv_image_form(img), GV_IMAGE_OCI_LAYOUT);
    /* the manifest skopeo reads for the tag, hashed by sha256sum */
    char want[100];
    snprintf(want, sizeof want, "sha256:%s",
             sh("skopeo inspect --raw oci:layout:v2 | sha256sum | cut -d' ' -f1"));
    T_EQ_STR(gv_image_manifest_digest(img), want);
    char cfg[100];
    snprintf(cfg, sizeof cfg, "%s", sh("skopeo inspect --raw oci:layout:v2 | jq -r .config.digest"));
    T_EQ_STR(gv_image_config_digest(img), cfg);
    layers_match(img, "layout/blobs/sha256", want, cfg);
    T_EQ_INT(gv_image_layer_count(img), 2);
    T_EQ_STR(gv_image_layer(img, 0)->created_by, "tiny: layer 0 files");
    T_EQ_STR(gv_image_layer(img, 1)->created_by, "tiny: layer 1 change");
    T_EQ_INT(gv_image_layer(img, 0)->codec, GV_CODEC_GZIP);

    json_t *sec = gv_image_describe(img);
    T_EQ_STR(json_string_value(json_object_get(sec, "form")), "oci-layout");
    T_EQ_STR(json_string_value(json_object_get(sec, "tag")), "v2");
    T_CHECK(has_tag(sec, "v2"));
    T_CHECK(!has_tag(sec, "v1"));
    T_EQ_STR(json_string_value(json_object_get(json_object_get(sec, "labels"),
                                               "org.example.version")),
             "1");
    T_EQ_STR(json_string_value(json_object_get(sec, "user")), "0:0");
    T_EQ_STR(json_string_value(json_array_get(json_object_get(sec, "cmd"), 0)), "/usr/bin/true");
    int saw_token = 0, saw_path = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(sec, "env"), i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!strcmp(name, "HF_TOKEN")) {
            saw_token = 1;
            T_CHECK(json_is_true(json_object_get(e, "redacted")));
            T_CHECK(json_object_get(e, "value") == NULL);
        }
        if (!strcmp(name, "PATH")) {
            saw_path = 1;
            T_EQ_STR(json_string_value(json_object_get(e, "value")), "/usr/bin:/bin");
        }
    }
    T_CHECK(saw_token && saw_path);
    char *text = gv_json_dumps(sec, 0);
    T_CHECK(text && !strstr(text, "hf_secret_value_123"));
    free(text);
    json_decref(sec);
    /* gv_image_env: the container's environment, as the config gives it */
    int env_token = 0;
    for (char *const *v = gv_image_env(img); *v; v++)
        env_token |= !strcmp(*v, "HF_TOKEN=hf_secret_value_123");
    T_CHECK(env_token);
    gv_image_close(img);

    img = open_ok("layout:v1");
    if (img) {
        T_EQ_INT(gv_image_layer_count(img), 1);
        gv_image_close(img);
    }
    /* two tags, one platform, none asked: which one is not guessed */
    open_fails("layout", "name one with :TAG", "v1, v2");
    open_fails("layout:nosuch", "no manifest tagged \"nosuch\"", "v1, v2");
}

static void test_oci_archive(void)
{
    char md[100], cfg[100];
    snprintf(md, sizeof md, "%s", sh("tar -xOf v2.oci.tar index.json | jq -r '.manifests[0].digest'"));
    snprintf(cfg, sizeof cfg, "%s",
             sh("tar -xOf v2.oci.tar blobs/sha256/%s | jq -r .config.digest", md + 7));
    sh("mkdir -p x && tar -xf v2.oci.tar -C x");
    const char *names[] = {"v2.oci.tar", "v2.oci.tar:v2"};
    for (int k = 0; k < 2; k++) {
        struct gv_image *img = open_ok(names[k]);
        if (!img)
            continue;
        T_EQ_INT(gv_image_form(img), GV_IMAGE_OCI_ARCHIVE);
        T_EQ_STR(gv_image_manifest_digest(img), md);
        T_EQ_STR(gv_image_config_digest(img), cfg);
        layers_match(img, "x/blobs/sha256", md, cfg);
        json_t *sec = gv_image_describe(img);
        T_CHECK(has_tag(sec, "v2"));
        T_EQ_STR(json_string_value(json_object_get(sec, "form")), "oci-archive");
        json_decref(sec);
        gv_image_close(img);
    }
}

static void test_docker_archive(void)
{
    char cfgname[200], cfg[100];
    snprintf(cfgname, sizeof cfgname, "%s",
             sh("tar -xOf v2.docker.tar manifest.json | jq -r '.[0].Config'"));
    snprintf(cfg, sizeof cfg, "sha256:%s",
             sh("tar -xOf v2.docker.tar %s | sha256sum | cut -d' ' -f1", cfgname));
    const char *names[] = {"v2.docker.tar", "v2.docker.tar:v2", "v2.docker.tar:tiny/img:v2"};
    for (int k = 0; k < 3; k++) {
        struct gv_image *img = open_ok(names[k]);
        if (!img)
            continue;
        T_EQ_INT(gv_image_form(img), GV_IMAGE_DOCKER_ARCHIVE);
        T_EQ_STR(gv_image_manifest_digest(img), "");
        T_EQ_STR(gv_image_config_digest(img), cfg);
        T_EQ_INT(gv_image_layer_count(img), 2);
        for (size_t i = 0; i < 2 && i < gv_image_layer_count(img); i++) {
            const struct gv_image_layer *l = gv_image_layer(img, i);
            T_EQ_STR(l->diff_id, sh("tar -xOf v2.docker.tar %s | jq -r '.rootfs.diff_ids[%zu]'",
                                    cfgname, i));
            /* the layer file, hashed by sha256sum, is its diff_id (uncompressed) */
            char member[200], file[100];
            snprintf(member, sizeof member, "%s",
                     sh("tar -xOf v2.docker.tar manifest.json | jq -r '.[0].Layers[%zu]'", i));
            snprintf(file, sizeof file, "sha256:%s",
                     sh("tar -xOf v2.docker.tar %s | sha256sum | cut -d' ' -f1", member));
            T_EQ_STR(l->diff_id, file);
            T_EQ_INT(l->codec, GV_CODEC_NONE);
            layer_reads_back(img, i, file);
        }
        json_t *sec = gv_image_describe(img);
        T_CHECK(has_tag(sec, "docker.io/tiny/img:v2"));
        T_CHECK(json_object_get(sec, "manifest_digest") == NULL);
        T_EQ_STR(json_string_value(json_object_get(sec, "form")), "docker-archive");
        json_decref(sec);
        gv_image_close(img);
    }
    open_fails("v2.docker.tar:other", "no image tagged \"other\"", NULL);
}

/* A legacy docker-archive whose second layer is gzip'ed (python's tarfile
 * and gzip): the codec told by the bytes, the digest that of the member. */
static void test_docker_gzip_layer(void)
{
    T_EQ_INT(tl_sh("cd '%s' && python3 - <<'EOF'\n"
                   "import gzip, io, json, tarfile\n"
                   "src = tarfile.open('v2.docker.tar')\n"
                   "dst = tarfile.open('gz.tar', 'w')\n"
                   "doc = json.load(src.extractfile('manifest.json'))\n"
                   "layer = doc[0]['Layers'][1]\n"
                   "doc[0]['Layers'][1] = 'gz/layer.tar.gz'\n"
                   "for m in src.getmembers():\n"
                   "    if m.name == 'manifest.json':\n"
                   "        continue\n"
                   "    dst.addfile(m, src.extractfile(m) if m.isfile() else None)\n"
                   "    if m.name == layer:\n"
                   "        z = gzip.compress(src.extractfile(m).read(), mtime=0)\n"
                   "        ti = tarfile.TarInfo('gz/layer.tar.gz'); ti.size = len(z)\n"
                   "        dst.addfile(ti, io.BytesIO(z))\n"
                   "b = json.dumps(doc).encode()\n"
                   "ti = tarfile.TarInfo('manifest.json'); ti.size = len(b)\n"
                   "dst.addfile(ti, io.BytesIO(b)); dst.close()\n"
                   "EOF",
                   dir),
             0);
    struct gv_image *img = open_ok("gz.tar");
    if (!img)
        return;
    char want[100];
    snprintf(want, sizeof want, "sha256:%s",
             sh("tar -xOf gz.tar gz/layer.tar.gz | sha256sum | cut -d' ' -f1"));
    T_EQ_INT(gv_image_layer_count(img), 2);
    if (gv_image_layer_count(img) == 2) {
        const struct gv_image_layer *l = gv_image_layer(img, 1);
        T_EQ_INT(l->codec, GV_CODEC_GZIP);
        T_EQ_STR(l->media_type, "application/vnd.docker.image.rootfs.diff.tar.gzip");
        T_EQ_STR(l->digest, want);
        T_CHECK(strcmp(l->digest, l->diff_id) != 0);
        layer_reads_back(img, 1, want);
        T_EQ_INT(gv_image_layer(img, 0)->codec, GV_CODEC_NONE);
    }
    gv_image_close(img);
}

static void test_zstd(void)
{
    struct gv_image *img = open_ok("zstd:v2");
    if (!img)
        return;
    char md[100];
    snprintf(md, sizeof md, "sha256:%s",
             sh("skopeo inspect --raw oci:zstd:v2 | sha256sum | cut -d' ' -f1"));
    T_EQ_STR(gv_image_manifest_digest(img), md);
    char cfg[100];
    snprintf(cfg, sizeof cfg, "%s", sh("skopeo inspect --raw oci:zstd:v2 | jq -r .config.digest"));
    layers_match(img, "zstd/blobs/sha256", md, cfg);
    for (size_t i = 0; i < gv_image_layer_count(img); i++) {
        T_EQ_STR(gv_image_layer(img, i)->media_type, "application/vnd.oci.image.layer.v1.tar+zstd");
        T_EQ_INT(gv_image_layer(img, i)->codec, GV_CODEC_ZSTD);
    }
    gv_image_close(img);
}

static void test_multi_platform(void)
{
    struct utsname u;
    uname(&u);
    const char *arch = !strcmp(u.machine, "aarch64") ? "arm64" : "amd64";
    char nested[100];
    snprintf(nested, sizeof nested, "%s", sh("jq -r '.manifests[0].digest' multi/index.json"));
    const char *want = sh("jq -r --arg a %s '.manifests[] | select(.platform.architecture == $a)"
                          " | .digest' multi/blobs/sha256/%s",
                          arch, nested + 7);
    const char *names[] = {"multi", "multi:multi"};
    for (int k = 0; k < 2; k++) {
        struct gv_image *img = open_ok(names[k]);
        if (!img)
            continue;
        T_EQ_STR(gv_image_manifest_digest(img), want);
        json_t *sec = gv_image_describe(img);
        T_EQ_STR(gv_json_path_str(sec, "platform.architecture"), arch);
        T_CHECK(has_tag(sec, "multi"));
        json_decref(sec);
        gv_image_close(img);
    }
}

/* Docker Engine 25+: an OCI layout with manifest.json too (the oci-archive
 * with a manifest.json added by python's tarfile, as docker writes it). */
static void test_docker_oci(void)
{
    char md[100], cfg[100], cmd[2048];
    snprintf(md, sizeof md, "%s", sh("tar -xOf v2.oci.tar index.json | jq -r '.manifests[0].digest'"));
    snprintf(cfg, sizeof cfg, "%s",
             sh("tar -xOf v2.oci.tar blobs/sha256/%s | jq -r .config.digest", md + 7));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && python3 - '%s' <<'EOF'\n"
             "import io, json, sys, tarfile\n"
             "src = tarfile.open('v2.oci.tar')\n"
             "dst = tarfile.open('d25.tar', 'w')\n"
             "for m in src.getmembers():\n"
             "    dst.addfile(m, src.extractfile(m) if m.isfile() else None)\n"
             "doc = json.dumps([{'Config': 'blobs/sha256/' + sys.argv[1][7:],\n"
             "                   'RepoTags': ['tiny/img:d25'], 'Layers': []}]).encode()\n"
             "ti = tarfile.TarInfo('manifest.json'); ti.size = len(doc)\n"
             "dst.addfile(ti, io.BytesIO(doc)); dst.close()\n"
             "EOF",
             dir, cfg);
    T_EQ_INT(tl_sh("%s", cmd), 0);
    struct gv_image *img = open_ok("d25.tar");
    if (!img)
        return;
    T_EQ_INT(gv_image_form(img), GV_IMAGE_DOCKER_OCI);
    T_EQ_STR(gv_image_manifest_digest(img), md);
    json_t *sec = gv_image_describe(img);
    T_CHECK(has_tag(sec, "tiny/img:d25"));
    T_CHECK(has_tag(sec, "v2"));
    T_EQ_STR(json_string_value(json_object_get(sec, "form")), "docker-oci");
    json_decref(sec);
    gv_image_close(img);
}

/* A copy of the layout whose v2 manifest is rewritten by the jq filter, the
 * index pointing at the new manifest. */
static void layout_with_manifest(const char *name, const char *filter)
{
    T_EQ_INT(tl_sh("cd '%s' && rm -rf %s && cp -a layout %s && "
                   "m=$(skopeo inspect --raw oci:layout:v2 | jq -c '%s') && "
                   "d=$(printf %%s \"$m\" | sha256sum | cut -d' ' -f1) && "
                   "printf %%s \"$m\" > %s/blobs/sha256/$d && "
                   "jq -c --arg d sha256:$d --argjson s $(printf %%s \"$m\" | wc -c) "
                   "'(.manifests[] | select(.annotations[\"org.opencontainers.image.ref.name\"] "
                   "== \"v2\")) |= (.digest = $d | .size = $s)' layout/index.json > %s/index.json",
                   dir, name, name, filter, name, name),
             0);
}

static void test_bad_inputs(void)
{
    /* a truncated oci-archive */
    sh("head -c $(( $(stat -c %%s v2.oci.tar) - 3000 )) v2.oci.tar > trunc.tar");
    open_fails("trunc.tar", "trunc.tar", "truncated");

    /* the manifest names a layer blob that is not there */
    char layer[100];
    snprintf(layer, sizeof layer, "%s", sh("skopeo inspect --raw oci:layout:v2 | jq -r '.layers[1].digest'"));
    sh("rm -rf missing && cp -a layout missing && rm missing/blobs/sha256/%s", layer + 7);
    open_fails("missing:v2", layer + 7, "missing");

    /* a layer blob of another size than the manifest says */
    sh("rm -rf grown && cp -a layout grown && echo x >> grown/blobs/sha256/%s", layer + 7);
    open_fails("grown:v2", "layer 1", "the manifest says");

    /* a config blob tampered with (same size, other bytes) */
    char cfg[100];
    snprintf(cfg, sizeof cfg, "%s", sh("skopeo inspect --raw oci:layout:v2 | jq -r .config.digest"));
    sh("rm -rf tampered && cp -a layout tampered && "
       "sed -i 's/hf_secret/HF_SECRET/' tampered/blobs/sha256/%s",
       cfg + 7);
    open_fails("tampered:v2", cfg, "does not match its digest");

    /* an unknown media type */
    layout_with_manifest("media", ".layers[0].mediaType = \"application/x-bogus\"");
    open_fails("media:v2", "unknown media type \"application/x-bogus\"", "layers[0].mediaType");

    /* a media type with a terminal escape: quoted with the escape as '?' */
    layout_with_manifest("escape", ".layers[1].mediaType = \"x\\u001b[2Jy\"");
    open_fails("escape:v2", "unknown media type \"x?[2Jy\"", "layers[1].mediaType");

    /* a bad digest string in the index */
    sh("rm -rf baddigest && cp -a layout baddigest && "
       "jq '.manifests[0].digest = \"sha256:../../etc/passwd\"' layout/index.json > "
       "baddigest/index.json");
    open_fails("baddigest:v2", "manifests[0].digest", "bad digest");

    /* index.json not an object */
    sh("rm -rf notobj && cp -a layout notobj && echo '[1]' > notobj/index.json");
    open_fails("notobj", "index.json", "JSON not an object");

    /* more layers in the manifest than diff_ids in the config */
    layout_with_manifest("count", ".layers += [.layers[0]]");
    open_fails("count:v2", "3 layers", "diff_ids 2");

    /* a docker-archive whose manifest.json names a member with ".." */
    T_EQ_INT(tl_sh("cd '%s' && python3 - <<'EOF'\n"
                   "import io, json, tarfile\n"
                   "src = tarfile.open('v2.docker.tar')\n"
                   "dst = tarfile.open('dotdot.tar', 'w')\n"
                   "for m in src.getmembers():\n"
                   "    if m.name == 'manifest.json':\n"
                   "        doc = json.load(src.extractfile(m))\n"
                   "        doc[0]['Layers'][0] = '../../etc/passwd'\n"
                   "        b = json.dumps(doc).encode(); m.size = len(b)\n"
                   "        dst.addfile(m, io.BytesIO(b))\n"
                   "    else:\n"
                   "        dst.addfile(m, src.extractfile(m) if m.isfile() else None)\n"
                   "dst.close()\n"
                   "EOF",
                   dir),
             0);
    open_fails("dotdot.tar", "Layers[0]", "\"../../etc/passwd\" refused");

    /* neither an image layout nor an archive */
    sh("echo hello > plain.txt");
    open_fails("plain.txt", "plain.txt", "not a tar archive");
    open_fails("nosuchfile:tag", "no such file", NULL);
}

/* podman:NAME:TAG: the engine's own export into the cache (a private podman
 * store for the test: CONTAINERS_STORAGE_CONF), read, then removed on close. */
static void test_engine_podman(void)
{
    if (tl_sh("command -v podman >/dev/null") != 0) {
        fprintf(stderr, "  podman part not run: podman missing\n");
        return;
    }
    char conf[700];
    snprintf(conf, sizeof conf, "%s/podman/storage.conf", dir);
    T_EQ_INT(tl_sh("cd '%s' && mkdir -p podman && printf '[storage]\\ndriver = \"vfs\"\\n"
                   "graphroot = \"%%s\"\\nrunroot = \"%%s\"\\n' \"$PWD/podman/graph\" "
                   "\"$PWD/podman/run\" > podman/storage.conf",
                   dir),
             0);
    setenv("CONTAINERS_STORAGE_CONF", conf, 1);
    if (tl_sh("cd '%s' && podman load -i v2.docker.tar >podman/load.log 2>&1", dir) != 0) {
        fprintf(stderr, "  podman part not run: podman load failed here\n");
        tl_sh("cat '%s/podman/load.log' >&2", dir);
        unsetenv("CONTAINERS_STORAGE_CONF");
        return;
    }
    char layers[600];
    snprintf(layers, sizeof layers, "%s",
             sh("podman image inspect --format '{{range .RootFS.Layers}}{{.}} {{end}}' tiny/img:v2"));
    struct gv_image *img = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_image_open("podman:tiny/img:v2", &img, &err), GV_OK);
    if (!img) {
        fprintf(stderr, "  %s\n", err.msg);
    } else {
        T_EQ_INT(gv_image_form(img), GV_IMAGE_OCI_ARCHIVE);
        char got[600] = "";
        for (size_t i = 0; i < gv_image_layer_count(img); i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s ",
                     gv_image_layer(img, i)->diff_id);
        got[strlen(got) ? strlen(got) - 1 : 0] = '\0';
        T_EQ_STR(got, layers);
        json_t *sec = gv_image_describe(img);
        T_EQ_STR(json_string_value(json_object_get(sec, "engine")), "podman");
        T_EQ_STR(json_string_value(json_object_get(sec, "tag")), "v2");
        T_EQ_STR(json_string_value(json_object_get(sec, "reference")), "podman:tiny/img:v2");
        json_decref(sec);
        /* the export lies in the cache while open ... */
        T_EQ_STR(sh("ls gpuvet/images | grep -c '^export-' || true"), "1");
        gv_image_close(img);
        /* ... and is removed on close */
        T_EQ_STR(sh("ls gpuvet/images | grep -c '^export-' || true"), "0");
    }
    /* podman's own oci-archive names the manifest by its full name
     * (ref.name docker.io/tiny/img:v2): a TAG matches it whole, without
     * the registry, or by its tag part */
    T_EQ_INT(tl_sh("cd '%s' && podman image save -q --format oci-archive -o podman/saved.tar "
                   "tiny/img:v2 >/dev/null 2>&1",
                   dir),
             0);
    T_EQ_STR(sh("tar -xOf podman/saved.tar index.json | "
                "jq -r '.manifests[0].annotations[\"org.opencontainers.image.ref.name\"]'"),
             "docker.io/tiny/img:v2");
    const char *tags[] = {"podman/saved.tar:v2", "podman/saved.tar:tiny/img:v2",
                          "podman/saved.tar:docker.io/tiny/img:v2"};
    for (int k = 0; k < 3; k++) {
        struct gv_image *s = open_ok(tags[k]);
        if (s)
            T_EQ_INT(gv_image_layer_count(s), 2);
        gv_image_close(s);
    }
    open_fails("podman/saved.tar:other/img:v2", "no manifest tagged \"other/img:v2\"", NULL);
    /* an image the store does not have: the engine's own message */
    img = NULL;
    T_CHECK(gv_image_open("podman:tiny/nosuch:v9", &img, &err) != GV_OK);
    fprintf(stderr, "  podman:tiny/nosuch:v9: %s\n", err.msg);
    T_CHECK(strstr(err.msg, "podman save tiny/nosuch:v9 failed") != NULL);
    T_EQ_STR(sh("ls gpuvet/images | grep -c '^export-' || true"), "0");
    unsetenv("CONTAINERS_STORAGE_CONF");
}

static int exists_yes(const char *p) { return !strcmp(p, "a:b") || !strcmp(p, "dir") || !strcmp(p, "f"); }

static void test_refs(void)
{
    struct gv_ref r;
    struct gv_err err = {0};
    T_EQ_INT(gv_ref_parse("a:b", exists_yes, &r, &err), GV_OK);
    T_EQ_STR(r.path, "a:b");
    T_EQ_STR(r.tag, "");
    T_EQ_INT(gv_ref_parse("a:b:c", exists_yes, &r, &err), GV_OK);
    T_EQ_STR(r.path, "a:b");
    T_EQ_STR(r.tag, "c");
    T_EQ_INT(gv_ref_parse("dir:6.4", exists_yes, &r, &err), GV_OK);
    T_EQ_STR(r.path, "dir");
    T_EQ_STR(r.tag, "6.4");
    T_EQ_INT(gv_ref_parse("f:docker.io/rocm/pytorch:latest", exists_yes, &r, &err), GV_OK);
    T_EQ_STR(r.path, "f");
    T_EQ_STR(r.tag, "docker.io/rocm/pytorch:latest");
    T_EQ_INT(gv_ref_parse("podman:localhost:5000/rocm:6.4", exists_yes, &r, &err), GV_OK);
    T_EQ_INT(r.kind, GV_REF_ENGINE);
    T_EQ_STR(r.engine, "podman");
    T_EQ_STR(r.path, "localhost:5000/rocm:6.4");
    T_EQ_STR(r.tag, "6.4");
    T_EQ_INT(gv_ref_parse("docker:rocm", exists_yes, &r, &err), GV_OK);
    T_EQ_STR(r.tag, "");
    T_EQ_INT(gv_ref_parse("docker:rocm/pytorch@sha256:0123", exists_yes, &r, &err), GV_OK);
    T_EQ_STR(r.path, "rocm/pytorch@sha256:0123");
    T_EQ_STR(r.tag, "");
    T_CHECK(gv_ref_parse("docker:--output=/etc/x", exists_yes, &r, &err) == GV_E_USAGE);
    T_CHECK(gv_ref_parse("podman:", exists_yes, &r, &err) == GV_E_USAGE);
    T_CHECK(gv_ref_parse("nothere:tag", exists_yes, &r, &err) == GV_E_NOTFOUND);
}

int main(void)
{
    test_refs();
    const char *src = getenv("GV_SRC");
    const char *tmp = getenv("GV_TEST_TMP") ? getenv("GV_TEST_TMP") : "/tmp";
    if (!src) {
        fprintf(stderr, "GV_SRC not set\n");
        return 1;
    }
    gv_mkdirs(tmp, 0755);
    snprintf(dir, sizeof dir, "%s/imgfmt-XXXXXX", tmp);
    if (!mkdtemp(dir))
        return 1;
    char cache[600];
    snprintf(cache, sizeof cache, "%s/img", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    int rc = tl_sh("bash '%s/tests/fixtures/tiny-image.sh' '%s/img' >'%s/fixture.log' 2>&1", src,
                   dir, dir);
    if (rc == 77) {
        fprintf(stderr, "skipped: umoci, skopeo or jq missing\n");
        tl_sh("rm -rf '%s'", dir);
        return 77;
    }
    if (rc != 0) {
        tl_sh("cat '%s/fixture.log' >&2", dir);
        return 1;
    }
    snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/img");
    T_RUN(test_layout);
    T_RUN(test_oci_archive);
    T_RUN(test_docker_archive);
    T_RUN(test_docker_gzip_layer);
    T_RUN(test_zstd);
    T_RUN(test_multi_platform);
    T_RUN(test_docker_oci);
    T_RUN(test_bad_inputs);
    T_RUN(test_engine_podman);
    int failed = t_done();
    dir[strlen(dir) - 4] = '\0';
    if (!failed)
        tl_sh("rm -rf '%s'", dir);
    return failed;
}
