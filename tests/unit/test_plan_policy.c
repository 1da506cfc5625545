/* The rollback plan's destination policy and the one predicate for profile
 * files a snapshot may hold and a plan may write back (issue 31). Expected
 * answers follow from docs/rollback.md and docs/snapshot-schema.md. */
#include "base/buf.h"
#include "env/envpolicy.h"
#include "plan/plan.h"
#include "t.h"

static int restorable(const char *text)
{
    char why[160];
    return gv_env_profile_restorable(text, strlen(text), why, sizeof why);
}

static void test_destinations(void)
{
    T_EQ_INT(gv_plan_dest("/etc/environment"), GV_DEST_ENVIRONMENT);
    T_EQ_INT(gv_plan_dest("/etc/profile.d/rocm.sh"), GV_DEST_PROFILE_D);
    T_EQ_INT(gv_plan_dest("/etc/ld.so.conf.d/rocm-5.7.0.conf"), GV_DEST_LOADER_CONF);
    T_EQ_INT(gv_plan_dest("/usr/lib/x86_64-linux-gnu/libamdhip64.so.6.0.32830"), GV_DEST_GPU_LIBRARY);
    T_EQ_INT(gv_plan_dest("/opt/rocm-6.0.0/lib/librocblas.so.4"), GV_DEST_GPU_LIBRARY);
    T_EQ_INT(gv_plan_dest("/usr/local/cuda/lib64/libcublasLt.so.12"), GV_DEST_GPU_LIBRARY);
    const char *never[] = {
        "/etc/ld.so.preload", "/root/.bashrc", "/etc/profile.d/../../root/.bashrc",
        "/etc/profile.d/.hidden.sh", "/etc/profile.d/x.sh/", "/etc/profile.d//x.sh",
        "/etc/profile.d/x.conf", "/etc/profile.d/sub/x.sh", "/etc/profile.d/x y.sh",
        "/etc/profile.d/x\n.sh", "/etc/ld.so.conf.d/.conf", "/etc/ld.so.conf", "/etc/bash.bashrc",
        "/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc/libamdhip64.so.6", "/tmp/lib/../libcuda.so.1",
        "/usr/lib/x86_64-linux-gnu/./libcuda.so.1", "/home/u/libcuda.so.1", "etc/environment", "",
    };
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        T_EQ_INT(gv_plan_dest(never[i]), GV_DEST_NONE);
        T_CHECK(!gv_plan_dest_allowed("write_file", never[i]));
        T_CHECK(!gv_plan_dest_allowed("remove_file", never[i]));
        T_CHECK(!gv_plan_dest_allowed("move_to_backup", never[i]));
    }
    T_EQ_INT(gv_plan_dest(NULL), GV_DEST_NONE);
    /* each command its own destinations */
    T_CHECK(gv_plan_dest_allowed("write_file", "/etc/environment"));
    T_CHECK(!gv_plan_dest_allowed("remove_file", "/etc/environment"));
    T_CHECK(gv_plan_dest_allowed("remove_file", "/etc/profile.d/hip6.sh"));
    T_CHECK(!gv_plan_dest_allowed("move_to_backup", "/etc/profile.d/hip6.sh"));
    T_CHECK(!gv_plan_dest_allowed("write_file", "/opt/rocm/lib/libamdhip64.so.6"));
    T_CHECK(gv_plan_dest_allowed("move_to_backup", "/opt/rocm/lib/libamdhip64.so.6"));
    T_CHECK(!gv_plan_dest_allowed("chmod", "/etc/profile.d/hip6.sh"));
    /* loader directories */
    T_CHECK(gv_valid_plain_path("/opt/rocm-5.7.0/lib"));
    T_CHECK(!gv_valid_plain_path("/opt/rocm/lib /tmp"));
    T_CHECK(!gv_valid_plain_path("/opt/rocm/lib:/tmp"));
    T_CHECK(!gv_valid_plain_path("include /etc/x.conf"));
    T_CHECK(!gv_valid_plain_path("/opt/rocm/lib#x"));
    T_CHECK(!gv_valid_plain_path("/opt/rocm/lib/"));
    T_CHECK(!gv_valid_plain_path("/opt/$(id)"));
}

static void test_profile_predicate(void)
{
    T_CHECK(restorable(""));
    T_CHECK(restorable("export PATH=/usr/local/cuda/bin:$PATH\n"));
    T_CHECK(restorable("# comment\n\n  export CUDA_HOME=\"/usr/local/cuda\" ROCM_PATH=${CUDA_HOME}\n"));
    T_CHECK(restorable("ROCM_PATH='/opt/rocm 5'")); /* no final newline */
    T_CHECK(restorable("HIP_VISIBLE_DEVICES=0,1\t# the two cards\n"));
    const char *refused[] = {
        "export PATH=$(touch /tmp/x):$PATH\n", "ROCM_PATH=`id`\n", "ROCM_PATH=/x; id\n",
        "ROCM_PATH=/x | id\n", "ROCM_PATH=/x && id\n", "ROCM_PATH=/x > /etc/passwd\n",
        "ROCM_PATH=\"$(id)\"\n", "ROCM_PATH='$(id)'\n", "ROCM_PATH=${X:-$(id)}\n",
        "ROCM_PATH=\"/x\n", "ROCM_PATH=/x\\\nid\n", "export LD_PRELOAD=/tmp/x.so\n",
        "export PROMPT_COMMAND=id\n", "BASH_ENV=/tmp/x\n", "HSA_TOOLS_LIB=/tmp/x.so\n",
        "CUDA_INJECTION64_PATH=/tmp/x.so\n", "OMP_TOOL_LIBRARIES=/tmp/x.so\n",
        "NCCL_NET_PLUGIN=/tmp/x.so\n", "HF_TOKEN=abc\n", "ROCM_API_KEY=abc\n", "EDITOR=vi\n",
        "id\n", "if true; then ROCM_PATH=/x; fi\n", "export ROCM_PATH\n", "alias ls=id\n",
        "ROCM_PATH=/x\r\n", "ROCM_PATH=\xff\n", ". /tmp/x\n",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (restorable(refused[i]))
            fprintf(stderr, "accepted: %s", refused[i]);
        T_CHECK(!restorable(refused[i]));
    }
    char big[GV_PROFILE_CONTENT_MAX + 2];
    memset(big, '#', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    T_CHECK(!restorable(big));
    /* the reason never quotes the file */
    char why[160];
    T_CHECK(!gv_env_profile_restorable("HF_TOKEN=hunter2\n", 17, why, sizeof why));
    T_CHECK(strstr(why, "hunter2") == NULL && strstr(why, "HF_TOKEN") == NULL && why[0]);
    /* with NUL inside: refused */
    T_CHECK(!gv_env_profile_restorable("ROCM_PATH=/x\0id\n", 16, why, sizeof why));
}

static void test_content_digest(void)
{
    char why[160];
    const char *text = "export ROCM_PATH=/opt/rocm-5.7.0\n";
    const char *sha = "3c57752faf56be7edfb742495e87d24b16c75b9d8227b14c41effb72905d3ce4";
    T_CHECK(gv_plan_content_ok(text, strlen(text), sha, why, sizeof why));
    T_CHECK(!gv_plan_content_ok(text, strlen(text) - 1, sha, why, sizeof why));
    T_CHECK(!gv_plan_content_ok(text, strlen(text), NULL, why, sizeof why));
}

static void test_quote_refuses_control(void)
{
    struct gv_buf b = {0};
    T_EQ_INT(gv_sh_quote(&b, "/etc/x\nid"), -1);
    T_EQ_INT(gv_sh_quote(&b, "a\rb"), -1);
    T_EQ_INT(gv_sh_quote(&b, NULL), -1);
    T_CHECK(b.len == 0);
    T_EQ_INT(gv_sh_quote(&b, "it's\tfine"), 0);
    char *s = gv_buf_take(&b);
    T_EQ_STR(s, "'it'\\''s\tfine'");
    free(s);
}

int main(void)
{
    T_RUN(test_destinations);
    T_RUN(test_profile_predicate);
    T_RUN(test_content_digest);
    T_RUN(test_quote_refuses_control);
    return t_done();
}
