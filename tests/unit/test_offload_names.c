/* GPU names: EF_AMDGPU_MACH values and KFD gfx_target_version numbers, with
 * the expected names taken from rocm-facts.md sections 3 and 7b. */
#include "env/offload.h"
#include "t.h"

static void test_mach_table_from_facts(void)
{
    static const struct {
        unsigned mach;
        const char *name;
    } facts[] = {
        {0x02c, "gfx900"},  {0x02f, "gfx906"},  {0x030, "gfx908"},  {0x032, "gfx90c"},
        {0x033, "gfx1010"}, {0x034, "gfx1011"}, {0x035, "gfx1012"}, {0x036, "gfx1030"},
        {0x037, "gfx1031"}, {0x038, "gfx1032"}, {0x039, "gfx1033"}, {0x03d, "gfx1035"},
        {0x03e, "gfx1034"}, {0x03f, "gfx90a"},  {0x040, "gfx940"},  {0x041, "gfx1100"},
        {0x042, "gfx1013"}, {0x043, "gfx1150"}, {0x044, "gfx1103"}, {0x045, "gfx1036"},
        {0x046, "gfx1101"}, {0x047, "gfx1102"}, {0x048, "gfx1200"}, {0x049, "gfx1250"},
        {0x04a, "gfx1151"}, {0x04b, "gfx941"},  {0x04c, "gfx942"},  {0x04e, "gfx1201"},
        {0x04f, "gfx950"},  {0x051, "gfx9-generic"}, {0x052, "gfx10-1-generic"},
        {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"}, {0x055, "gfx1152"},
        {0x058, "gfx1153"}, {0x059, "gfx12-generic"},
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
        T_EQ_STR(gv_amdgpu_mach_name(facts[i].mach), facts[i].name);
    T_CHECK(gv_amdgpu_mach_name(0) == NULL);
    T_CHECK(gv_amdgpu_mach_name(0x027) == NULL); /* reserved */
    T_CHECK(gv_amdgpu_mach_name(0x0ff) == NULL);
    T_CHECK(gv_amdgpu_mach_name(0x13f) == NULL); /* only the low byte is the machine */
}

static void test_target_versions(void)
{
    static const struct {
        unsigned v;
        const char *name;
    } cases[] = {
        {90010, "gfx90a"},   {90402, "gfx942"},   {100300, "gfx1030"}, {110001, "gfx1101"},
        {110000, "gfx1100"}, {90000, "gfx900"},   {90008, "gfx908"},   {90012, "gfx90c"},
        {120001, "gfx1201"}, {110501, "gfx1151"}, {100100, "gfx1010"}, {90500, "gfx950"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        gv_gfx_name_from_target_version(cases[i].v, out, sizeof out);
        T_EQ_STR(out, cases[i].name);
    }
    char small[5];
    gv_gfx_name_from_target_version(110001, small, sizeof small);
    T_EQ_STR(small, "gfx1"); /* truncated, still terminated */
    gv_gfx_name_from_target_version(110001, NULL, 0); /* no crash */
}

int main(void)
{
    T_RUN(test_mach_table_from_facts);
    T_RUN(test_target_versions);
    return t_done();
}
