/* The layer applier (src/image/layer.c, tar.c, tree.c, keep.c): layers built
 * with real tools (GNU tar, bsdtar, gzip, zstd) and hostile ones with
 * python3's tarfile, fed through gv_blob_open_file + gv_stage_apply with
 * digests computed here by sha256sum. Checks the tree against the sources
 * (sha256sum), and that every refused layer leaves nothing outside the
 * staging directory and that freeing the tree removes it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/stage.h"
#include "t.h"
#include "tools.h"

static char tmp[1024], src[1100], out[1100], parent[1100];

/* The sha256 hex of a file, by sha256sum (not the code under test). */
static void sum_of(const char *path, char hex[65])
{
    char *s = tl_capture("sha256sum '%s'", path);
    hex[0] = '\0';
    if (s && strlen(s) >= 64) {
        memcpy(hex, s, 64);
        hex[64] = '\0';
    }
    free(s);
}

static long long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* meta for blob (compressed as codec) whose uncompressed tar is tarpath. */
static void meta_for(struct gv_image_layer *m, const char *blob, const char *tarpath,
                     enum gv_layer_codec codec)
{
    char hex[65];
    memset(m, 0, sizeof *m);
    sum_of(blob, hex);
    snprintf(m->digest, sizeof m->digest, "sha256:%s", hex);
    sum_of(tarpath, hex);
    snprintf(m->diff_id, sizeof m->diff_id, "sha256:%s", hex);
    m->codec = codec;
    m->size = size_of(blob);
}

static int apply_one(struct gv_image_tree *t, size_t i, const struct gv_image_layer *m,
                     const char *blob, struct gv_err *err)
{
    struct gv_blob *b;
    int rc = gv_blob_open_file(blob, "test layer", &b, err);
    if (rc != GV_OK)
        return rc;
    rc = gv_stage_apply(t, i, m, b, err);
    gv_blob_close(b);
    return rc;
}

/* Writes python3 code that makes hostile tars: kind, then the output path. */
static const char *hostile_py =
    "import io, sys, tarfile\n"
    "kind, out = sys.argv[1], sys.argv[2]\n"
    "def reg(t, name, data=b'x', mode=0o644):\n"
    "    i = tarfile.TarInfo(name); i.size = len(data); i.mode = mode\n"
    "    t.addfile(i, io.BytesIO(data))\n"
    "def typ(t, name, ty, link=''):\n"
    "    i = tarfile.TarInfo(name); i.type = ty; i.linkname = link\n"
    "    if ty == tarfile.DIRTYPE: i.mode = 0o755\n"
    "    t.addfile(i)\n"
    "if kind == 'huge':\n"
    "    i = tarfile.TarInfo('big'); i.size = 0\n"
    "    h = bytearray(i.tobuf(tarfile.GNU_FORMAT))\n"
    "    h[124:136] = b'\\x80' + (1 << 37).to_bytes(11, 'big')\n"
    "    h[148:156] = b'        '\n"
    "    h[148:156] = ('%06o\\0 ' % sum(h[:512])).encode()\n"
    "    open(out, 'wb').write(bytes(h[:512]) + b'\\0' * 4096)\n"
    "    sys.exit(0)\n"
    "if kind == 'cut':\n"
    "    b = io.BytesIO(); t = tarfile.open(fileobj=b, mode='w', format=tarfile.GNU_FORMAT)\n"
    "    reg(t, 'etc/ok.conf', b'fine\\n'); reg(t, 'usr/lib/cut.bin', b'y' * 5000); t.close()\n"
    "    open(out, 'wb').write(b.getvalue()[:512 * 4 + 1000])\n"
    "    sys.exit(0)\n"
    "t = tarfile.open(out, 'w', format=tarfile.PAX_FORMAT)\n"
    "if kind == 'dotdot': reg(t, 'usr/../../escaped')\n"
    "elif kind == 'escape':\n"
    "    typ(t, 'evil', tarfile.SYMTYPE, '../../..'); reg(t, 'evil/escaped')\n"
    "elif kind == 'abslink':\n"
    "    typ(t, 'abs', tarfile.SYMTYPE, '/'); reg(t, 'abs/etc/via-abs.conf', b'abs\\n')\n"
    "elif kind == 'missing_wh': reg(t, 'opt/.wh.nothere', b'')\n"
    "elif kind == 'deep':\n"
    "    for n in range(1, 300): typ(t, '/'.join(['d'] * n), tarfile.DIRTYPE)\n"
    "    reg(t, '/'.join(['d'] * 300))\n"
    "elif kind == 'hard_missing': typ(t, 'usr/x', tarfile.LNKTYPE, 'usr/nothere')\n"
    "elif kind == 'upper':\n"
    /* same-layer entry before the opaque marker, a hard link to a lower
     * layer's file, a device node and a FIFO (skipped) */
    "    typ(t, 'data', tarfile.DIRTYPE)\n"
    "    reg(t, 'data/c.txt', b'c from layer 2\\n')\n"
    "    reg(t, 'data/.wh..wh..opq', b'')\n"
    "    typ(t, 'etc/hl.conf', tarfile.LNKTYPE, 'etc/small.conf')\n"
    "    typ(t, 'dev/null2', tarfile.CHRTYPE)\n"
    "    typ(t, 'dev/fifo', tarfile.FIFOTYPE)\n"
    "    reg(t, 'lib/libbar.so', b'\\x7fELF bar')\n"
    "    typ(t, 'usr/lib/libfoo.so.hl', tarfile.LNKTYPE, 'usr/lib/libfoo.so')\n"
    "t.close()\n";

static int hostile(const char *kind, const char *path)
{
    char py[1200];
    snprintf(py, sizeof py, "%s/hostile.py", tmp);
    FILE *f = fopen(py, "w");
    if (!f)
        return -1;
    fputs(hostile_py, f);
    fclose(f);
    return tl_sh("python3 '%s' '%s' '%s'", py, kind, path);
}

/* Nothing was written outside the staging directory: no "escaped" file in
 * the places a climb out of it would reach. */
static int escaped(void)
{
    char p[1300];
    const char *dirs[] = {tmp, parent, src, out};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/escaped", dirs[i]);
        if (access(p, F_OK) == 0)
            return 1;
    }
    snprintf(p, sizeof p, "%s/../escaped", tmp);
    return access(p, F_OK) == 0;
}

static int parent_empty(void)
{
    return tl_sh("[ -z \"$(ls -A '%s')\" ]", parent) == 0;
}

static void build_sources(void)
{
    /* layer 0: GNU tar, gzip */
    T_EQ_INT(tl_sh("set -e; cd '%s'; mkdir -p l0/usr/lib l0/usr/share l0/etc l0/bin l0/opt l0/data; "
                   "cd l0; { printf '\\177ELF'; head -c 2200000 /dev/urandom; } > usr/lib/libfoo.so.1; "
                   "ln -s libfoo.so.1 usr/lib/libfoo.so; head -c 3000000 /dev/urandom > usr/share/big.dat; "
                   "printf 'small\\n' > etc/small.conf; printf '#!/bin/sh\\n' > bin/tool; chmod 755 bin/tool; "
                   "echo gone > opt/gone.txt; echo stays > opt/keepme.txt; echo a > data/a.txt; "
                   "mkdir data/sub; echo b > data/sub/b.txt; ln -s usr/lib lib; "
                   "tar --numeric-owner --format=gnu -cf '%s/l0.tar' .; gzip -kn9 '%s/l0.tar'",
                   src, out, out),
           0);
    /* layer 1: bsdtar (pax), zstd: a whiteout made as an empty file, a new file */
    T_EQ_INT(tl_sh("set -e; cd '%s'; mkdir -p l1/opt l1/usr/share; : > l1/opt/.wh.gone.txt; "
                   "echo new > l1/usr/share/new.txt; "
                   "bsdtar --format pax -cf '%s/l1.tar' -C l1 opt usr; zstd -q -k '%s/l1.tar'",
                   src, out, out),
           0);
    /* layer 2: python's tarfile (member order chosen), gzip with two members */
    char p[1200];
    snprintf(p, sizeof p, "%s/l2.tar", out);
    T_EQ_INT(hostile("upper", p), 0);
    T_EQ_INT(tl_sh("set -e; cd '%s'; head -c 3000 l2.tar | gzip -n > l2.tar.gz; "
                   "tail -c +3001 l2.tar | gzip -n >> l2.tar.gz", out),
             0);
}

static void expect_file_digest(struct gv_image_tree *t, const char *inimage, const char *source)
{
    char want[65], got[65] = "";
    sum_of(source, want);
    T_EQ_INT(gv_image_tree_digest(t, inimage, got), 1);
    T_EQ_STR(got, want);
}

static int stage_three(enum gv_stage_mode mode, struct gv_image_tree **t, struct gv_err *err)
{
    const char *blobs[] = {"l0.tar.gz", "l1.tar.zst", "l2.tar.gz"};
    const char *tars[] = {"l0.tar", "l1.tar", "l2.tar"};
    enum gv_layer_codec codecs[] = {GV_CODEC_GZIP, GV_CODEC_ZSTD, GV_CODEC_GZIP};
    int rc = gv_stage_begin(mode, parent, 3, t, err);
    for (size_t i = 0; rc == GV_OK && i < 3; i++) {
        char blob[1300], tarp[1300];
        snprintf(blob, sizeof blob, "%s/%s", out, blobs[i]);
        snprintf(tarp, sizeof tarp, "%s/%s", out, tars[i]);
        struct gv_image_layer m;
        meta_for(&m, blob, tarp, codecs[i]);
        rc = apply_one(*t, i, &m, blob, err);
    }
    return rc;
}

static void test_three_layers(void)
{
    struct gv_image_tree *t = NULL;
    struct gv_err err = {0};
    int rc = stage_three(GV_STAGE_SNAPSHOT, &t, &err);
    if (rc != GV_OK)
        fprintf(stderr, "stage: %s\n", err.msg);
    T_EQ_INT(rc, GV_OK);
    if (!t)
        return;
    const char *root = gv_image_tree_root(t);
    char p[1400], s[1400];
    struct stat st;
    /* ELF kept (content written), big non-ELF a sparse placeholder */
    snprintf(p, sizeof p, "%s/usr/lib/libfoo.so.1", root);
    snprintf(s, sizeof s, "%s/l0/usr/lib/libfoo.so.1", src);
    char a[65], b[65];
    sum_of(p, a);
    sum_of(s, b);
    T_EQ_STR(a, b);
    snprintf(p, sizeof p, "%s/usr/share/big.dat", root);
    T_EQ_INT(stat(p, &st), 0);
    T_EQ_INT(st.st_size, 3000000);
    T_EQ_INT(st.st_blocks, 0);
    char unknown[65];
    T_EQ_INT(gv_image_tree_digest(t, "/usr/share/big.dat", unknown), 0); /* not kept: not hashed */
    snprintf(s, sizeof s, "%s/l0/usr/lib/libfoo.so.1", src);
    expect_file_digest(t, "/usr/lib/libfoo.so.1", s);
    expect_file_digest(t, "/usr/lib/libfoo.so", s); /* through the link */
    expect_file_digest(t, "/lib/libfoo.so.1", s);   /* through lib -> usr/lib */
    snprintf(p, sizeof p, "%s/bin/tool", root);
    T_EQ_INT(stat(p, &st), 0);
    T_EQ_INT(st.st_mode & 0777, 0755);
    /* the symlink is a link on disk */
    snprintf(p, sizeof p, "%s/usr/lib/libfoo.so", root);
    T_EQ_INT(lstat(p, &st), 0);
    T_CHECK(S_ISLNK(st.st_mode));
    /* whiteout (layer 1) */
    snprintf(p, sizeof p, "%s/opt/gone.txt", root);
    T_CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/opt/keepme.txt", root);
    T_EQ_INT(access(p, F_OK), 0);
    T_EQ_INT(gv_image_tree_layer(t, "/opt/gone.txt"), -1);
    T_EQ_INT(gv_image_tree_stats(t, 1)->whiteouts, 1);
    /* opaque dir (layer 2): lower entries gone, the same layer's c.txt kept
     * although it came before the marker */
    snprintf(p, sizeof p, "%s/data/a.txt", root);
    T_CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/data/sub", root);
    T_CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/data/c.txt", root);
    T_EQ_INT(access(p, F_OK), 0);
    T_EQ_INT(gv_image_tree_layer(t, "/data/c.txt"), 2);
    /* hard link to a lower layer's file: same inode, same digest */
    struct stat st2;
    snprintf(p, sizeof p, "%s/etc/hl.conf", root);
    snprintf(s, sizeof s, "%s/etc/small.conf", root);
    T_EQ_INT(stat(p, &st), 0);
    T_EQ_INT(stat(s, &st2), 0);
    T_EQ_INT(st.st_ino, st2.st_ino);
    snprintf(s, sizeof s, "%s/l0/etc/small.conf", src);
    expect_file_digest(t, "/etc/hl.conf", s);
    T_EQ_INT(gv_image_tree_layer(t, "/etc/hl.conf"), 2);
    T_EQ_INT(gv_image_tree_layer(t, "/etc/small.conf"), 0);
    /* written through lib -> usr/lib of layer 0 */
    snprintf(p, sizeof p, "%s/usr/lib/libbar.so", root);
    T_EQ_INT(access(p, F_OK), 0);
    T_EQ_INT(gv_image_tree_layer(t, "/usr/lib/libbar.so"), 2);
    T_EQ_INT(gv_image_tree_layer(t, "/usr/share/new.txt"), 1);
    /* a hard link to a symlink is the same symlink */
    snprintf(p, sizeof p, "%s/usr/lib/libfoo.so.hl", root);
    T_EQ_INT(lstat(p, &st), 0);
    T_CHECK(S_ISLNK(st.st_mode));
    snprintf(s, sizeof s, "%s/l0/usr/lib/libfoo.so.1", src);
    expect_file_digest(t, "/usr/lib/libfoo.so.hl", s);
    /* devices and FIFOs skipped, counted */
    T_EQ_INT(gv_image_tree_stats(t, 2)->skipped, 2);
    snprintf(p, sizeof p, "%s/dev/null2", root);
    T_CHECK(access(p, F_OK) != 0);
    T_CHECK(gv_image_tree_stats(t, 0)->files >= 10);
    T_EQ_INT(gv_image_tree_stats(t, 3) == NULL, 1);
    T_EQ_INT(gv_image_tree_digest(t, "/nothere", a), 0);
    char rootcopy[4096];
    snprintf(rootcopy, sizeof rootcopy, "%s", root);
    gv_image_tree_free(t, 0);
    T_CHECK(access(rootcopy, F_OK) != 0);
    T_CHECK(parent_empty());
}

static void test_full_mode(void)
{
    struct gv_image_tree *t = NULL;
    struct gv_err err = {0};
    T_EQ_INT(stage_three(GV_STAGE_FULL, &t, &err), GV_OK);
    if (!t)
        return;
    char p[1400], s[1400], a[65], b[65];
    snprintf(p, sizeof p, "%s/usr/share/big.dat", gv_image_tree_root(t));
    snprintf(s, sizeof s, "%s/l0/usr/share/big.dat", src);
    sum_of(p, a);
    sum_of(s, b);
    T_EQ_STR(a, b);
    expect_file_digest(t, "/usr/share/big.dat", s); /* every file kept: every file hashed */
    gv_image_tree_free(t, 0);
    T_CHECK(parent_empty());
}

/* Applies layer 0 then blob (with meta m) as layer 1; expects an error
 * containing want; checks that nothing escaped and that free removes all. */
static void expect_refused(const char *what, const char *blob, const struct gv_image_layer *m,
                           const char *want)
{
    struct gv_image_tree *t = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_stage_begin(GV_STAGE_SNAPSHOT, parent, 2, &t, &err), GV_OK);
    if (!t)
        return;
    char l0[1300], l0t[1300];
    snprintf(l0, sizeof l0, "%s/l0.tar.gz", out);
    snprintf(l0t, sizeof l0t, "%s/l0.tar", out);
    struct gv_image_layer m0;
    meta_for(&m0, l0, l0t, GV_CODEC_GZIP);
    T_EQ_INT(apply_one(t, 0, &m0, l0, &err), GV_OK);
    int rc = apply_one(t, 1, m, blob, &err);
    T_CHECK(rc != GV_OK);
    if (!strstr(err.msg, want) || !strstr(err.msg, "layer 1 (sha256:")) {
        fprintf(stderr, "%s: message \"%s\" lacks \"%s\"\n", what, err.msg, want);
        T_CHECK(0);
    }
    T_CHECK(!escaped());
    gv_image_tree_free(t, 0);
    T_CHECK(parent_empty());
}

static void refuse_hostile(const char *kind, const char *want)
{
    char tarp[1300];
    snprintf(tarp, sizeof tarp, "%s/%s.tar", out, kind);
    T_EQ_INT(hostile(kind, tarp), 0);
    struct gv_image_layer m;
    meta_for(&m, tarp, tarp, GV_CODEC_NONE);
    expect_refused(kind, tarp, &m, want);
}

static void test_hostile_names(void)
{
    refuse_hostile("dotdot", "usr/../../escaped");
    refuse_hostile("escape", "link /evil -> ../../..");
    refuse_hostile("missing_wh", "opt/.wh.nothere: a whiteout of a file no lower layer has");
    refuse_hostile("hard_missing", "usr/x: a hard link to usr/nothere");
    refuse_hostile("huge", "over the");
    refuse_hostile("cut", "usr/lib/cut.bin: truncated");
    refuse_hostile("deep", "nested deeper than 256 directories"); /* and removed again */
}

static void test_absolute_link_stays_inside(void)
{
    struct gv_image_tree *t = NULL;
    struct gv_err err = {0};
    char tarp[1300];
    snprintf(tarp, sizeof tarp, "%s/abslink.tar", out);
    T_EQ_INT(hostile("abslink", tarp), 0);
    struct gv_image_layer m;
    meta_for(&m, tarp, tarp, GV_CODEC_NONE);
    T_EQ_INT(gv_stage_begin(GV_STAGE_SNAPSHOT, parent, 1, &t, &err), GV_OK);
    if (!t)
        return;
    T_EQ_INT(apply_one(t, 0, &m, tarp, &err), GV_OK);
    char p[1400];
    snprintf(p, sizeof p, "%s/etc/via-abs.conf", gv_image_tree_root(t));
    T_EQ_INT(access(p, F_OK), 0); /* "/" is the staging root */
    T_EQ_INT(gv_image_tree_layer(t, "/etc/via-abs.conf"), 0);
    gv_image_tree_free(t, 0);
    T_CHECK(parent_empty());
}

static void test_bad_streams(void)
{
    char blob[1300], tarp[1300];
    struct gv_image_layer m;
    snprintf(tarp, sizeof tarp, "%s/l1.tar", out);
    /* truncated gzip: the first half of layer 1 compressed with gzip */
    snprintf(blob, sizeof blob, "%s/cut.tar.gz", out);
    T_EQ_INT(tl_sh("gzip -nc '%s' | head -c 300 > '%s'", tarp, blob), 0);
    meta_for(&m, blob, tarp, GV_CODEC_GZIP);
    expect_refused("truncated gzip", blob, &m, "truncated");
    /* corrupt zstd: bytes flipped in the middle of the frame */
    snprintf(blob, sizeof blob, "%s/bad.tar.zst", out);
    T_EQ_INT(tl_sh("cp '%s.zst' '%s' && printf 'XXXXXXXXXXXXXXXX' | dd of='%s' bs=1 seek=40 "
                   "conv=notrunc status=none", tarp, blob, blob),
             0);
    meta_for(&m, blob, tarp, GV_CODEC_ZSTD);
    expect_refused("corrupt zstd", blob, &m, "zstd");
    /* wrong digest, wrong size, wrong diff_id, codec mismatch */
    snprintf(blob, sizeof blob, "%s/l1.tar.zst", out);
    meta_for(&m, blob, tarp, GV_CODEC_ZSTD);
    m.digest[10] = m.digest[10] == 'a' ? 'b' : 'a';
    expect_refused("wrong digest", blob, &m, "digest mismatch, the blob was changed");
    meta_for(&m, blob, tarp, GV_CODEC_ZSTD);
    m.size += 1;
    expect_refused("wrong size", blob, &m, "the manifest says");
    meta_for(&m, blob, tarp, GV_CODEC_ZSTD);
    m.diff_id[20] = m.diff_id[20] == 'a' ? 'b' : 'a';
    expect_refused("wrong diff_id", blob, &m, "diff_id");
    meta_for(&m, blob, tarp, GV_CODEC_GZIP);
    expect_refused("codec mismatch", blob, &m, "the media type says gzip, the bytes are zstd");
    snprintf(blob, sizeof blob, "%s/l1.tar", out);
    meta_for(&m, blob, tarp, GV_CODEC_ZSTD);
    expect_refused("tar as zstd", blob, &m, "the bytes are uncompressed tar");
}

static void test_keep(void)
{
    const unsigned char elf[] = "\177ELF", txt[] = "text";
    T_EQ_INT(gv_image_keep("/usr/lib/libx.so", 50LL << 20, elf, 4), 1);
    T_EQ_INT(gv_image_keep("/usr/share/x.dat", 50LL << 20, txt, 4), 0);
    T_EQ_INT(gv_image_keep("/usr/share/x.dat", 1LL << 20, txt, 4), 1);
    T_EQ_INT(gv_image_keep("/var/lib/dpkg/status", 5LL << 20, txt, 4), 1);
    T_EQ_INT(gv_image_keep("etc/ld.so.cache", 5LL << 20, txt, 4), 1);
    T_EQ_INT(gv_image_keep("/var/lib/rpm/rpmdb.sqlite", 5LL << 20, txt, 4), 1);
    T_EQ_INT(gv_image_keep("/usr/lib/python3/dist-packages/torch-2.4.dist-info/RECORD",
                           5LL << 20, txt, 4), 1);
    unsigned char co[20] = {0x7f, 'E', 'L', 'F', 2, 1};
    co[18] = 224; /* EM_AMDGPU: a code object, small or large */
    T_EQ_INT(gv_image_keep("/usr/lib/rocblas/library/Kernels.so-000-gfx90a.hsaco", 5LL << 20, co, 20), 0);
    T_EQ_INT(gv_image_keep("/usr/lib/rocblas/library/TensileLibrary_gfx90a.co", 4096, co, 20), 0);
}

int main(void)
{
    if (!tl_have("python3") || !tl_have("bsdtar") || !tl_have("zstd") || !tl_have("gzip")) {
        fprintf(stderr, "skipped: python3, bsdtar, zstd and gzip are needed\n");
        return 77;
    }
    char name[64];
    snprintf(name, sizeof name, "image_layers.%d", (int)getpid());
    tl_tmpdir(name, tmp, sizeof tmp);
    snprintf(src, sizeof src, "%s/src", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    snprintf(parent, sizeof parent, "%s/stage", tmp);
    tl_sh("mkdir -p '%s' '%s' '%s'", src, out, parent);
    build_sources();
    T_RUN(test_keep);
    T_RUN(test_three_layers);
    T_RUN(test_full_mode);
    T_RUN(test_hostile_names);
    T_RUN(test_absolute_link_stays_inside);
    T_RUN(test_bad_streams);
    int rc = t_done();
    if (rc == 0)
        tl_sh("rm -rf '%s'", tmp);
    return rc;
}
