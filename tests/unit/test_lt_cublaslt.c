/* gpuvet's cuBLASLt declarations (src/dev/syms/syms_cublaslt.h) against the REAL
 * libcublasLt, host side only (no GPU needed): every symbol of the list
 * resolves, and the attribute ids and enum values gpuvet passes mean what
 * gpuvet thinks, read back through the library itself (gv_lt_probe): a layout
 * created as 7 x 5, ld 9, CUDA_R_16F reads back so; the batch count and
 * stride set through gpuvet's ids read back through the ids of ROWS/COLS/...
 * only if they were wrong; TRANSA set to gpuvet's OP_T reads back, TRANSB
 * keeps the library's default, which must be gpuvet's OP_N; the workspace
 * limit reads back; every compute/scale pair gv_lt_gemm uses is accepted; the
 * descriptors of every GEMM case of the full suite (shapes, batches, strides)
 * are accepted by the library.
 * Skipped (77) where no libcublasLt can be found. */
#include <stdlib.h>

#include "base/json.h"
#include "dev/lt.h"
#include "dev/vendor.h"
#include "t.h"

static json_int_t geti(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    return json_is_integer(v) ? json_integer_value(v) : -999;
}

int main(void)
{
    struct gv_vlib lib;
    struct gv_api_cublaslt api;
    struct gv_err e = {0};
    if (gv_vlib_open(GV_LIB_CUBLASLT, &lib, &api, &e) != GV_OK) {
        printf("skipped: libcublasLt not found (%s)\n", e.msg);
        return 77;
    }
    printf("cuBLASLt: %s (%s)\n", lib.path, lib.how);
    T_CHECK(api.cublasLtGetVersion() >= 110000);
    struct gv_lt lt;
    gv_lt_from_cublaslt(&lt, &api);
    T_CHECK(lt.desc_get && lt.layout_get && lt.pref_get);
    json_t *o = gv_lt_probe(&lt);
    char *s = gv_json_dumps(o, JSON_SORT_KEYS);
    printf("%s\n", s ? s : "?");
    free(s);
    T_EQ_INT(geti(o, "layout", "create"), 0);
    T_EQ_INT(geti(o, "layout", "rows"), 7);
    T_EQ_INT(geti(o, "layout", "cols"), 5);
    T_EQ_INT(geti(o, "layout", "ld"), 9);
    T_EQ_INT(geti(o, "layout", "type"), 2); /* CUDA_R_16F in library_types.h */
    T_EQ_INT(geti(o, "layout", "batch_count"), 3);
    T_EQ_INT(geti(o, "layout", "batch_stride"), 123);
    T_EQ_INT(geti(o, "matmul_desc", "transa"), 1); /* CUBLAS_OP_T */
    T_EQ_INT(geti(o, "matmul_desc", "transb"), 0); /* the library's default, CUBLAS_OP_N */
    T_EQ_INT(geti(o, "matmul_desc", "transb"), lt.k.op_n);
    T_EQ_INT(geti(o, "preference", "max_workspace"), 3 << 20);
    const char *pairs[] = {"f32", "tf32", "f64", "f16_acc32", "f16_acc16"};
    for (int i = 0; i < 5; i++)
        T_EQ_INT(geti(o, "compute_types", pairs[i]), 0);
    size_t cases = 0;
    const char *id;
    json_t *v;
    json_object_foreach(json_object_get(o, "case_descriptors"), id, v) {
        if (!json_is_true(v))
            fprintf(stderr, "  %s: %s\n", id, json_string_value(v));
        T_CHECK(json_is_true(v));
        cases++;
    }
    printf("descriptors of %zu GEMM cases accepted\n", cases);
    T_CHECK(cases >= 40);
    json_decref(o);
    gv_vlib_close(&lib);
    return t_done();
}
