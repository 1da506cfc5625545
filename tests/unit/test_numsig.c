/* Error signatures of one run judged alone (kb/numsig.h): the bits a correct result
 * keeps come from the compute and output formats (unit roundoff 2^-p, written here
 * from the formats' definitions), and with them a failing case of one run is named
 * as compare names it against a before-file. */
#include "kb/numsig.h"
#include "t.h"

static void test_expected_bits(void)
{
    T_NEAR(kb_numsig_expected_bits("f32", "f32"), 24, 1e-12);
    T_NEAR(kb_numsig_expected_bits("f32", "f16"), 11, 1e-12);
    T_NEAR(kb_numsig_expected_bits("f32", "bf16"), 8, 1e-12);
    T_NEAR(kb_numsig_expected_bits("tf32", "f32"), 11, 1e-12);
    T_NEAR(kb_numsig_expected_bits("f64", "f64"), 53, 1e-12);
    T_NEAR(kb_numsig_expected_bits("nope", "f32"), 0, 0);
}

static const char *first(const struct kb_numsig_case *c)
{
    const struct kb_numsig *s[3];
    return kb_numsig_match(c, s, 3) ? s[0]->id : "";
}

static void test_one_run(void)
{
    /* torch 1.13's CPU bf16 GEMM on subnormal inputs: 2.1 bits of the 8 a bf16 result keeps */
    struct kb_numsig_case ftz = {"gemm.bf16acc32.64x64x256.subnormal.s1", "gemm", "bf16", "f32",
                                 "bf16", kb_numsig_expected_bits("f32", "bf16"), 2.1, 0, 0, 0, 0,
                                 0};
    T_EQ_STR(first(&ftz), "flush-to-zero");
    /* TF32 inputs: 11.7 bits of the 24 of fp32 */
    struct kb_numsig_case tf = {"gemm.f32.256x256x256.normal.s1", "gemm", "f32", "f32", "f32",
                                kb_numsig_expected_bits("f32", "f32"), 11.7, 0, 0, 0, 0, 0};
    T_EQ_STR(first(&tf), "tf32-inputs");
    /* a declared TF32 case keeping 11 bits is what it promised: no TF32 signature */
    struct kb_numsig_case decl = tf;
    decl.compute = "tf32";
    decl.bits_before = kb_numsig_expected_bits("tf32", "f32");
    T_EQ_STR(first(&decl), "");
}

int main(void)
{
    T_RUN(test_expected_bits);
    T_RUN(test_one_run);
    return t_done();
}
