/* gv_kb_image_tag_findings (src/kb/image_tags.h), the "tag says X, content
 * says Y" check that doctor's image-tag rule and gpuvet diff share: tags and
 * labels in the forms the official images use (rocm/pytorch, nvidia/cuda,
 * NGC's monthly tags) against hand-written content. Expected claims and
 * verdicts are worked out by hand from the tag strings. */
#include <string.h>

#include "kb/image_tags.h"
#include "t.h"

/* A snapshot with an image section of tags and labels, a ROCm install of
 * rocm (NULL: none), a cudart library of cudart, a torch of torch/cuda. */
static json_t *snap(const char *tags[], const char *label_key, const char *label,
                    const char *rocm, const char *cudart, const char *torch, const char *cuda)
{
    json_t *img = json_pack("{s:b, s:[], s:{}}", "collected", 1, "tags", "labels");
    for (int i = 0; tags && tags[i]; i++)
        json_array_append_new(json_object_get(img, "tags"), json_string(tags[i]));
    if (label_key)
        json_object_set_new(json_object_get(img, "labels"), label_key, json_string(label));
    json_t *installs = json_array(), *items = json_array(), *envs = json_array();
    if (rocm)
        json_array_append_new(installs, json_pack("{s:s, s:s, s:s}", "kind", "rocm", "layout",
                                                  "amd", "version", rocm));
    if (cudart)
        json_array_append_new(items, json_pack("{s:s, s:s}", "name", "cudart", "version", cudart));
    if (torch)
        json_array_append_new(envs, json_pack("{s:s, s:{s:s, s:s*}}", "prefix", "/usr", "torch",
                                              "version", torch, "cuda", cuda));
    return json_pack("{s:o, s:{s:b, s:o}, s:{s:b, s:o}, s:{s:b, s:o}}", "image", img, "stacks",
                     "collected", 1, "installs", installs, "libraries", "collected", 1, "items",
                     items, "python", "collected", 1, "environments", envs);
}

static json_t *found(json_t *s)
{
    json_t *out = json_array();
    int n = gv_kb_image_tag_findings(s, out);
    T_EQ_INT(n, (long)json_array_size(out));
    json_decref(s);
    return out;
}

static const char *field(const json_t *out, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(out, i), key));
}

static const char *ev_value(const json_t *out, size_t i, size_t e)
{
    const json_t *ev = json_object_get(json_array_get(out, i), "evidence");
    return json_string_value(json_object_get(json_array_get(ev, e), "value"));
}

static const char *rocm_tag[] = {"rocm/pytorch:rocm6.4_ubuntu24.04_py3.12_pytorch_release_2.6.0",
                                 NULL};

static void rocm_pytorch_agrees(void)
{
    json_t *out = found(snap(rocm_tag, NULL, NULL, "6.4.1", NULL, "2.6.0+rocm6.4", NULL));
    T_EQ_INT(json_array_size(out), 0);
    json_decref(out);
}

static void rocm_pytorch_contradicted(void)
{
    json_t *out = found(snap(rocm_tag, NULL, NULL, "5.7.1", NULL, "2.5.1+rocm6.2", NULL));
    T_EQ_INT(json_array_size(out), 2);
    T_EQ_STR(field(out, 0, "id"), "image-tag");
    T_EQ_STR(field(out, 0, "severity"), "warning");
    T_EQ_STR(field(out, 0, "kind"), "rocm");
    T_EQ_STR(field(out, 0, "claimed"), "6.4");
    T_EQ_STR(ev_value(out, 0, 0), rocm_tag[0]);
    T_EQ_STR(ev_value(out, 0, 1), "5.7.1");
    T_EQ_STR(field(out, 1, "kind"), "torch");
    T_EQ_STR(field(out, 1, "claimed"), "2.6.0");
    T_EQ_STR(ev_value(out, 1, 1), "2.5.1");
    const char *m = field(out, 1, "message");
    T_CHECK(m && strstr(m, "2.6.0") && strstr(m, "2.5.1"));
    json_decref(out);
}

/* nvidia/cuda:12.4.1-…: the toolkit's 12.4.1 ships libcudart 12.4.127 (compared
 * on major.minor); 11.8 contradicts it. */
static void nvidia_cuda(void)
{
    const char *tags[] = {"nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", NULL};
    json_t *out = found(snap(tags, NULL, NULL, NULL, "12.4.127", NULL, NULL));
    T_EQ_INT(json_array_size(out), 0);
    json_decref(out);
    out = found(snap(tags, NULL, NULL, NULL, "11.8.89", NULL, NULL));
    T_EQ_INT(json_array_size(out), 1);
    T_EQ_STR(field(out, 0, "kind"), "cuda");
    T_EQ_STR(field(out, 0, "claimed"), "12.4.1");
    json_decref(out);
}

/* A label names the version; a wheel's cu124 label in a tag. */
static void labels_and_wheel_labels(void)
{
    json_t *out = found(snap(NULL, "com.nvidia.cuda.version", "12.4.1", NULL, NULL,
                             "2.5.1+cu118", "11.8"));
    T_EQ_INT(json_array_size(out), 1);
    T_EQ_STR(ev_value(out, 0, 0), "12.4.1");
    T_EQ_STR(ev_value(out, 0, 1), "11.8");
    json_decref(out);
    const char *tags[] = {"example/train:torch2.5.1-cu124", NULL};
    out = found(snap(tags, NULL, NULL, NULL, NULL, "2.5.1+cu124", "12.4"));
    T_EQ_INT(json_array_size(out), 0);
    json_decref(out);
    out = found(snap(tags, NULL, NULL, NULL, NULL, "2.5.1+cu121", "12.1"));
    T_EQ_INT(json_array_size(out), 1);
    T_EQ_STR(field(out, 0, "claimed"), "12.4");
    json_decref(out);
}

/* Not judged: NGC's month tags, a kind the content lacks, no image section,
 * versions no release has, a long tag. */
static void not_judged(void)
{
    const char *ngc[] = {"nvcr.io/nvidia/pytorch:24.05-py3", NULL};
    json_t *out = found(snap(ngc, NULL, NULL, NULL, NULL, "2.4.0a0", "12.4"));
    T_EQ_INT(json_array_size(out), 0);
    json_decref(out);
    out = found(snap(rocm_tag, NULL, NULL, NULL, NULL, NULL, NULL));
    T_EQ_INT(json_array_size(out), 0);
    json_decref(out);
    json_t *s = snap(rocm_tag, NULL, NULL, "5.7.1", NULL, NULL, NULL);
    json_object_del(s, "image");
    out = found(s);
    T_EQ_INT(json_array_size(out), 0);
    json_decref(out);
    const char *odd[] = {"x/rocm:99999999999999999999.1", "rocm", "cu", "cuda.", "x:torch_", NULL};
    out = found(snap(odd, NULL, NULL, "5.7.1", NULL, NULL, NULL));
    T_EQ_INT(json_array_size(out), 0);
    json_decref(out);
    char longtag[3000];
    memset(longtag, 'a', sizeof longtag - 1);
    longtag[sizeof longtag - 1] = '\0';
    memcpy(longtag + 2000, "rocm6.4", 7);
    const char *lt[] = {longtag, NULL};
    out = found(snap(lt, NULL, NULL, "5.7.1", NULL, NULL, NULL));
    T_EQ_INT(json_array_size(out), 0); /* read up to 511 bytes: the claim is past them */
    json_decref(out);
}

int main(void)
{
    T_RUN(rocm_pytorch_agrees);
    T_RUN(rocm_pytorch_contradicted);
    T_RUN(nvidia_cuda);
    T_RUN(labels_and_wheel_labels);
    T_RUN(not_judged);
    return t_done();
}
