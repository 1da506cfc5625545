/* The list of device kinds (src/dev/kind.h) and the one --device parser:
 * every kind has what check, probe and bench ask of it; check and bench open
 * the same device, with the same note, for the same --device (none
 * included); an unknown kind is one message that lists the kinds. */
#include <string.h>

#include "dev/kind.h"
#include "probe/probe.h"
#include "t.h"

static void every_kind_is_complete(void)
{
    size_t n;
    const struct gv_dev_kind *const *k = gv_dev_kinds(&n);
    int fallbacks = 0, gpus = 0;
    T_CHECK(n >= 4);
    for (size_t i = 0; i < n; i++) {
        T_CHECK(k[i]->name && k[i]->usage && strstr(k[i]->usage, k[i]->name) == k[i]->usage);
        T_CHECK(k[i]->backend && k[i]->bench);
        if (!k[i]->backend || !k[i]->bench)
            continue;
        T_EQ_STR(k[i]->backend->name, k[i]->name);
        T_EQ_STR(k[i]->bench->name, k[i]->name);
        T_CHECK(k[i]->n_probe_routes > 0 && k[i]->probe_routes);
        T_CHECK(k[i]->n_bench_routes > 0 && k[i]->bench_routes);
        /* a kind that can be the host's CPU says which precisions bench measures there */
        T_CHECK(!k[i]->on_host || k[i]->n_host_types > 0);
        T_CHECK(gv_dev_kind_find(k[i]->name) == k[i]);
        fallbacks += k[i]->auto_choice == GV_AUTO_FALLBACK;
        gpus += k[i]->auto_choice == GV_AUTO_GPU;
        /* never chosen for the user: it starts their Python */
        T_CHECK(!k[i]->starts_python || k[i]->auto_choice == GV_AUTO_NEVER);
        /* a GPU kind is never the host's CPU */
        T_CHECK(k[i]->auto_choice != GV_AUTO_GPU || !k[i]->on_host);
    }
    T_EQ_INT(fallbacks, 1);
    T_CHECK(gpus >= 2);
    T_CHECK(gv_dev_kind_find("cpu")->auto_choice == GV_AUTO_FALLBACK);
    T_CHECK(gv_dev_kind_find("torch")->auto_choice == GV_AUTO_NEVER);
    T_CHECK(gv_dev_kind_find("hip")->auto_choice == GV_AUTO_GPU);
}

static void spec_questions(void)
{
    T_CHECK(gv_dev_kind_of("torch:cpu") == &gv_kind_torch);
    T_CHECK(gv_dev_kind_of("torch") == &gv_kind_torch);
    T_CHECK(gv_dev_kind_of("hip:1") == &gv_kind_hip);
    T_CHECK(gv_dev_kind_of("cpu:emulate=tf32") == &gv_kind_cpu);
    T_CHECK(gv_dev_kind_of("cudax:0") == NULL);
    T_CHECK(gv_dev_kind_of("torchy") == NULL);
    T_CHECK(gv_dev_kind_of(NULL) == NULL);
    T_EQ_INT(gv_dev_spec_on_host("cpu"), 1);
    T_EQ_INT(gv_dev_spec_on_host("cpu:threads=2"), 1);
    T_EQ_INT(gv_dev_spec_on_host("torch:cpu"), 1);
    T_EQ_INT(gv_dev_spec_on_host("torch:cpu:0"), 1);
    T_EQ_INT(gv_dev_spec_on_host("torch:cuda:0"), 0);
    T_EQ_INT(gv_dev_spec_on_host("torch"), 0);
    T_EQ_INT(gv_dev_spec_on_host("cuda:0"), 0);
    T_EQ_INT(gv_dev_spec_on_host("hip:0"), 0);
    T_EQ_INT(gv_dev_spec_on_host(NULL), 0);
    T_EQ_INT(gv_dev_spec_starts_python("torch:cpu"), 1);
    T_EQ_INT(gv_dev_spec_starts_python("torch"), 1);
    T_EQ_INT(gv_dev_spec_starts_python("torchy:0"), 0);
    T_EQ_INT(gv_dev_spec_starts_python("cuda:0"), 0);
    T_EQ_INT(gv_dev_spec_starts_python(NULL), 0);
}

/* probe's routes are the kind's, on the device asked for */
static void probe_routes_are_the_kinds(void)
{
    size_t n;
    const struct gv_dev_kind *const *k = gv_dev_kinds(&n);
    for (size_t i = 0; i < n; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "%s:0", k[i]->name);
        struct gv_probe_route r[8];
        size_t nr = gv_probe_routes(spec, r, 8);
        T_EQ_INT(nr, k[i]->n_probe_routes);
        for (size_t j = 0; j < nr; j++) {
            T_EQ_STR(r[j].name, k[i]->probe_routes[j].name);
            T_EQ_STR(r[j].device, spec);
        }
    }
    struct gv_probe_route r[8];
    T_EQ_INT(gv_probe_routes(NULL, r, 8), 1);
    T_EQ_STR(r[0].name, "cpu");
}

/* check (gv_device_open) and bench (gv_bench_device_open) for one spec: the
 * same kind, the same note, the same error. */
static void same_choice(const char *spec)
{
    const struct gv_backend *be = NULL;
    struct gv_device *dev = NULL;
    const struct gv_dev_kind *kind = NULL;
    struct gv_bdev *bd = NULL;
    char note_c[1200] = "x", note_b[1200] = "y";
    struct gv_err ec = {0}, eb = {0};
    int rc = gv_device_open(spec, &be, &dev, note_c, sizeof note_c, &ec);
    int rb = gv_bench_device_open(spec, &kind, &bd, note_b, sizeof note_b, &eb);
    fprintf(stderr, "  --device %s: check %s (%s), bench %s (%s)\n", spec ? spec : "(none)",
            rc ? ec.msg : be->name, note_c, rb ? eb.msg : kind->name, note_b);
    T_EQ_INT(rc, rb);
    if (!rc && !rb) {
        T_EQ_STR(be->name, kind->name);
        T_EQ_STR(note_c, note_b);
        if (spec)
            T_EQ_STR(note_c, "");
        else
            T_CHECK(strstr(note_c, "first GPU found") || strstr(note_c, "no GPU found, using the CPU ("));
    }
    if (rc && rb)
        T_EQ_STR(ec.msg, eb.msg);
    if (!rc)
        be->close(dev);
    if (!rb)
        kind->bench->close(bd);
}

static void check_and_bench_choose_alike(void)
{
    same_choice(NULL);
    same_choice("cpu");
    same_choice("nosuch:0");
}

static void unknown_kind_lists_the_kinds(void)
{
    const struct gv_backend *be = NULL;
    struct gv_device *dev = NULL;
    struct gv_err e = {0};
    T_EQ_INT(gv_device_open("gpu:0", &be, &dev, NULL, 0, &e), GV_E_USAGE);
    T_CHECK(strstr(e.msg, "unknown device kind 'gpu'") != NULL);
    size_t n;
    const struct gv_dev_kind *const *k = gv_dev_kinds(&n);
    for (size_t i = 0; i < n; i++)
        T_CHECK(strstr(e.msg, k[i]->usage) != NULL);
    /* a name longer than any kind's is as unknown as any other */
    struct gv_err e2 = {0};
    T_EQ_INT(gv_device_open("a-very-long-name-that-is-no-kind-of-device:0", &be, &dev, NULL, 0,
                            &e2),
             GV_E_USAGE);
    T_CHECK(strstr(e2.msg, k[n - 1]->usage) != NULL);
}

int main(void)
{
    T_RUN(every_kind_is_complete);
    T_RUN(spec_questions);
    T_RUN(probe_routes_are_the_kinds);
    T_RUN(check_and_bench_choose_alike);
    T_RUN(unknown_kind_lists_the_kinds);
    return t_done();
}
