/* One predicate for "mixed ROCm releases" (kb/rocm_mix.h), behind both
 * `gpuvet doctor` (rocm-mixed-path) and `gpuvet diff` ("mixed" changes).
 * Snapshots are tests/data/doctor/healthy-amd.json (/opt/rocm -> 6.0.0, its
 * libamdhip64.so.6 and librocblas.so.4 resolved) edited per case. The cases
 * marked "disagreed" are where the two old algorithms gave different answers;
 * each is checked through the predicate and through both commands' code. */
#include <string.h>

#include "base/err.h"
#include "env/diff.h"
#include "kb/rocm_mix.h"
#include "kb/rules.h"
#include "snap_edit.h"
#include "t.h"

static json_t *S;

static void fresh(void)
{
    json_decref(S);
    S = snap_load("healthy-amd.json");
}

static void item(const char *soname, const char *path, const char *release)
{
    char v[512];
    snprintf(v, sizeof v, "{\"name\": \"%s\", \"soname\": \"%s\", \"path\": \"%s\", "
             "\"rocm_release\": \"%s\"}",
             strncmp(soname, "libamdhip64", 11) ? "rocblas" : "hip-runtime", soname, path, release);
    snap_set(S, "libraries.items.+", v);
}

static void resolve(const char *soname, const char *path)
{
    char k[256], v[512];
    snprintf(k, sizeof k, "loader/resolved/%s", soname);
    snprintf(v, sizeof v, "{\"path\": \"%s\", \"via\": \"ld.so.conf\"}", path);
    snap_set(S, k, v);
}

static char seen[512];

static void note(const struct gv_rocm_mix *m, void *arg)
{
    (void)arg;
    size_t n = strlen(seen);
    snprintf(seen + n, sizeof seen - n, "%s%s=%s/%s", n ? " " : "", m->soname, m->release,
             m->reference);
}

/* The predicate's answer as "soname=release/reference ...". */
static const char *mixed(void)
{
    seen[0] = '\0';
    gv_rocm_mixed_each(S, note, NULL);
    return seen;
}

/* How many rocm-mixed-path findings doctor reports (resolved SONAMEs only:
 * the cases set no LD_LIBRARY_PATH or conf entries of another release). */
static int doctor_count(void)
{
    json_t *f = gv_doctor_run_rule(S, gv_rule_find("rocm-mixed-path"));
    int n = (int)json_array_size(f);
    json_decref(f);
    return n;
}

/* How many "mixed" changes diff reports from the healthy snapshot to S. */
static int diff_count(void)
{
    json_t *before = snap_load("healthy-amd.json"), *d = NULL;
    struct gv_err err = {0};
    int n = -1;
    if (!gv_diff_snapshots(before, S, "a", "b", &d, &err)) {
        n = 0;
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(d, "changes"), i, c)
            n += !strcmp(json_string_value(json_object_get(c, "kind")), "mixed");
    }
    json_decref(d);
    json_decref(before);
    return n;
}

static void healthy_is_not_mixed(void)
{
    fresh();
    T_EQ_STR(gv_rocm_reference(S), "6.0.0");
    T_EQ_STR(mixed(), "");
    T_EQ_INT(doctor_count(), 0);
    T_EQ_INT(diff_count(), 0);
}

/* Agreed before: 5.7's librocblas.so.4 shadows the default 6.0's. */
static void shadowed_soname(void)
{
    fresh();
    item("librocblas.so.4", "/opt/rocm-5.7.0/lib/librocblas.so.4.0.50700", "5.7");
    resolve("librocblas.so.4", "/opt/rocm-5.7.0/lib/librocblas.so.4.0.50700");
    T_EQ_STR(mixed(), "librocblas.so.4=5.7/6.0.0");
    T_EQ_INT(doctor_count(), 1);
    T_EQ_INT(diff_count(), 1);
}

/* Agreed before: a SONAME only 5.7 has is the only choice, no mix. */
static void only_choice(void)
{
    fresh();
    item("librocblas.so.3", "/opt/rocm-5.7.0/lib/librocblas.so.3.0.50700", "5.7");
    resolve("librocblas.so.3", "/opt/rocm-5.7.0/lib/librocblas.so.3.0.50700");
    T_EQ_STR(mixed(), "");
    T_EQ_INT(doctor_count(), 0);
    T_EQ_INT(diff_count(), 0);
}

/* Disagreed: a stray 5.7 librocblas.so.3 left inside the 6.0 tree made the
 * old doctor believe 6.0 ships librocblas.so.3 (any file under its prefix),
 * so 5.7's own librocblas.so.3 was "mixed"; diff judged by the files'
 * releases and said no. 6.0 ships no librocblas.so.3: no mix (the stray is
 * rocm-unowned's business). */
static void stray_in_default_tree(void)
{
    fresh();
    item("librocblas.so.3", "/opt/rocm-6.0.0/lib/librocblas.so.3.0.50700", "5.7");
    item("librocblas.so.3", "/opt/rocm-5.7.0/lib/librocblas.so.3.0.50700", "5.7");
    resolve("librocblas.so.3", "/opt/rocm-5.7.0/lib/librocblas.so.3.0.50700");
    T_EQ_STR(mixed(), "");
    T_EQ_INT(doctor_count(), 0);
    T_EQ_INT(diff_count(), 0);
}

/* Disagreed: /opt/rocm is 6.0 but the loader hands out 6.2's HIP runtime and
 * rocBLAS, which 6.0 ships too. The old diff judged against the resolved HIP
 * runtime (6.2, and never the runtime itself): no mix; the old doctor judged
 * against the default release: both shadow 6.0's files. Programs built
 * against /opt/rocm run on another release's runtime: mixed, in both. */
static void runtime_of_another_release(void)
{
    fresh();
    item("libamdhip64.so.6", "/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.41133", "6.2");
    item("librocblas.so.4", "/opt/rocm-6.2.0/lib/librocblas.so.4.2.60200", "6.2");
    resolve("libamdhip64.so.6", "/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.41133");
    resolve("librocblas.so.4", "/opt/rocm-6.2.0/lib/librocblas.so.4.2.60200");
    T_EQ_STR(mixed(), "libamdhip64.so.6=6.2/6.0.0 librocblas.so.4=6.2/6.0.0");
    T_EQ_INT(doctor_count(), 2);
    T_EQ_INT(diff_count(), 2);
}

/* No default install known: the resolved HIP runtime's release is the reference. */
static void reference_without_default(void)
{
    fresh();
    snap_set(S, "stacks", "{\"collected\": false, \"reason\": \"test\"}");
    T_EQ_STR(gv_rocm_reference(S), "6.0");
    item("librocblas.so.4", "/opt/rocm-5.7.0/lib/librocblas.so.4.0.50700", "5.7");
    resolve("librocblas.so.4", "/opt/rocm-5.7.0/lib/librocblas.so.4.0.50700");
    T_EQ_STR(mixed(), "librocblas.so.4=5.7/6.0");
}

int main(void)
{
    T_RUN(healthy_is_not_mixed);
    T_RUN(shadowed_soname);
    T_RUN(only_choice);
    T_RUN(stray_in_default_tree);
    T_RUN(runtime_of_another_release);
    T_RUN(reference_without_default);
    json_decref(S);
    return t_done();
}
