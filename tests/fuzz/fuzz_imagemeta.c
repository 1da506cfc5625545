/* Fuzz target: the image reader's documents (src/image/format.h): the bytes
 * as an index.json, a manifest, a config and docker's manifest.json, and as a
 * tarball to index. Besides "no crash, no leak", checks the parsers'
 * promises: every digest kept is sha256 + 64 lowercase hex, every media type
 * known, every member name from manifest.json plain and relative, every tar
 * member inside the bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/format.h"

static void digest_ok(const char *d)
{
    struct gv_err err = {0};
    if (gv_digest_check(d, "fuzz", "digest", &err) != GV_OK)
        abort();
}

static void index_check(const char *data, size_t size)
{
    struct gv_oci_index x;
    struct gv_err err = {0};
    if (gv_oci_index_parse(data, size, "index", &x, &err) != GV_OK)
        return;
    for (size_t i = 0; i < x.n; i++) {
        digest_ok(x.d[i].digest);
        enum gv_media_kind k = gv_media_kind(x.d[i].media_type, NULL);
        if ((k != GV_MEDIA_INDEX && k != GV_MEDIA_MANIFEST) || x.d[i].size < 0)
            abort();
    }
    gv_oci_index_free(&x);
}

static void manifest_check(const char *data, size_t size)
{
    struct gv_oci_manifest m;
    struct gv_err err = {0};
    if (gv_oci_manifest_parse(data, size, "manifest", &m, &err) != GV_OK)
        return;
    digest_ok(m.config.digest);
    if (gv_media_kind(m.config.media_type, NULL) != GV_MEDIA_CONFIG)
        abort();
    for (size_t i = 0; i < m.nlayers; i++) {
        digest_ok(m.layers[i].digest);
        if (gv_media_kind(m.layers[i].media_type, NULL) != GV_MEDIA_LAYER)
            abort();
    }
    gv_oci_manifest_free(&m);
}

static void config_check(const char *data, size_t size)
{
    struct gv_oci_config c;
    struct gv_err err = {0};
    if (gv_oci_config_parse(data, size, "config", &c, &err) != GV_OK)
        return;
    for (size_t i = 0; i < c.ndiff; i++)
        digest_ok(c.diff_ids[i]);
    if (!c.env)
        abort();
    gv_oci_config_free(&c);
}

static void docker_check(const char *data, size_t size)
{
    struct gv_docker_manifest m;
    struct gv_err err = {0};
    if (gv_docker_manifest_parse(data, size, "manifest.json", &m, &err) != GV_OK)
        return;
    for (size_t i = 0; i < m.n; i++) {
        if (!gv_member_name_ok(m.e[i].config))
            abort();
        for (size_t j = 0; j < m.e[i].nlayers; j++)
            if (!gv_member_name_ok(m.e[i].layers[j]) || m.e[i].layers[j][0] == '/')
                abort();
    }
    gv_docker_manifest_free(&m);
}

static void tar_check(const uint8_t *data, size_t size)
{
    struct gv_tarindex t;
    struct gv_err err = {0};
    if (gv_tarindex_build_mem(data, size, "tar", &t, &err) != GV_OK)
        return;
    for (size_t i = 0; i < t.n; i++)
        if (t.m[i].off < 0 || t.m[i].size < 0 || t.m[i].off + t.m[i].size > (off_t)size)
            abort();
    gv_tarindex_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    index_check(text, size);
    manifest_check(text, size);
    config_check(text, size);
    docker_check(text, size);
    tar_check(data, size);
    return 0;
}
