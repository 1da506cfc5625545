/* The environment of an inspected root (src/env/rootenv.c, issue 31): the
 * root's /etc/environment in pam_env's format, read inside the root. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "env/rootenv.h"
#include "t.h"

static char tmpdir[256];

/* The list as "NAME=VALUE|NAME=VALUE" (caller frees), "" when empty. */
static char *joined(char **envp)
{
    size_t n = 1;
    for (size_t i = 0; envp && envp[i]; i++)
        n += strlen(envp[i]) + 1;
    char *s = calloc(1, n);
    for (size_t i = 0; s && envp && envp[i]; i++) {
        if (i)
            strcat(s, "|");
        strcat(s, envp[i]);
    }
    return s;
}

/* Parses len bytes of text and compares the result with want. */
static void expect_n(const char *text, size_t len, const char *want, int line)
{
    char **envp = NULL;
    struct gv_err err = {0};
    int rc = gv_rootenv_parse(text, len, &envp, &err);
    char *got = joined(envp);
    t_checks++;
    if (rc != GV_OK || !envp || !got || strcmp(got, want)) {
        t_failed++;
        fprintf(stderr, "line %d: rc %d, got \"%s\", want \"%s\"\n", line, rc,
                got ? got : "(null)", want);
    }
    free(got);
    gv_rootenv_free(envp);
}
#define EXPECT(text, want) expect_n(text, strlen(text), want, __LINE__)

static void check_format(void)
{
    EXPECT("", "");
    EXPECT("PATH=/usr/bin:/bin\n", "PATH=/usr/bin:/bin");
    EXPECT("A=1\nB=2\n\n\nC=3\n", "A=1|B=2|C=3");
    /* export, any blanks after it; leading blanks */
    EXPECT("export ROCM_PATH=/opt/rocm\n\texport\t\tHIP_PLATFORM=amd\n  X=1\n",
           "ROCM_PATH=/opt/rocm|HIP_PLATFORM=amd|X=1");
    /* a variable named export, and export alone */
    EXPECT("export=1\nexport\nexport \n", "export=1");
    /* quotes: one pair, taken literally inside */
    EXPECT("A=\"/opt/rocm lib\"\nB='x y'\nC=\"it's\"\nD='say \"hi\"'\nE=\"\"\nF=''\n",
           "A=/opt/rocm lib|B=x y|C=it's|D=say \"hi\"|E=|F=");
    EXPECT("A=\"  padded  \"\n", "A=  padded  ");
    /* unmatched or inner quotes of the same kind: skipped */
    EXPECT("A=\"open\nB='open\nC=\"\nD=\"a\"b\"\nE='a'b'\nOK=1\n", "OK=1");
    EXPECT("A=mid\"dle\nB=end'\n", "A=mid\"dle|B=end'");
    /* no expansion, no escapes, no command substitution */
    EXPECT("A=$HOME/x\nB=${PATH}\nC=$(id)\nD=`id`\nE=\"a\\\"\n",
           "A=$HOME/x|B=${PATH}|C=$(id)|D=`id`|E=a\\");
    /* comments: whole lines only; a '#' in a value is kept (pam_env) */
    EXPECT("# comment\n   # indented\n#A=1\nB=x # not a comment\nC=\"#\"\n",
           "B=x # not a comment|C=#");
    /* invalid names and lines without a direct '=' */
    EXPECT("1A=x\nA-B=x\nA B=x\n=x\n A.B=x\nFOO =x\nFOO\nFOO= x\n\xc3\xa9=x\nOK_2=y\n_=z\n",
           "FOO= x|OK_2=y|_=z");
    /* '=' inside a value, empty value */
    EXPECT("OPTS=a=b=c\nEMPTY=\n", "OPTS=a=b=c|EMPTY=");
    /* no trailing newline; CRLF; trailing blanks */
    EXPECT("A=1\nB=2", "A=1|B=2");
    EXPECT("A=1\r\nB=\"x\"\r\nC=3 \t\n", "A=1|B=x|C=3");
    /* a name set twice keeps its last value, in the place of that line */
    EXPECT("A=1\nB=2\nA=3\nC=4\nB=5\n", "A=3|C=4|B=5");
    EXPECT("AB=1\nA=2\nABC=3\nA=4\n", "AB=1|ABC=3|A=4");
}

static void check_limits(void)
{
    /* values: 8192 bytes kept, 8193 skipped (quoted: the quotes do not count) */
    size_t big = GV_ROOTENV_VALUE_MAX;
    char *text = malloc(3 * big + 64), *want = malloc(big + 8);
    int n = sprintf(text, "A=");
    memset(text + n, 'v', big);
    n += (int)big;
    n += sprintf(text + n, "\nB=\"");
    memset(text + n, 'w', big);
    n += (int)big;
    n += sprintf(text + n, "\"\nC=");
    memset(text + n, 'x', big + 1);
    n += (int)big + 1;
    n += sprintf(text + n, "\nD=1");
    char **envp = NULL;
    T_EQ_INT(gv_rootenv_parse(text, (size_t)n, &envp, NULL), GV_OK);
    T_CHECK(envp && envp[0] && envp[1] && envp[2] && !envp[3]);
    if (envp && envp[0] && envp[1] && envp[2]) {
        memset(want, 0, big + 8);
        memcpy(want, "A=", 2);
        memset(want + 2, 'v', big);
        T_CHECK(!strcmp(envp[0], want)); /* not printed: 8 KiB */
        T_EQ_INT(strlen(envp[1]), big + 2);
        T_CHECK(!strcmp(envp[2], "D=1"));
    }
    gv_rootenv_free(envp);
    /* names: 256 bytes kept, 257 skipped */
    memset(text, 'N', 256);
    n = 256 + sprintf(text + 256, "=1\n");
    memset(text + n, 'M', 257);
    n += 257 + sprintf(text + n + 257, "=2\n");
    T_EQ_INT(gv_rootenv_parse(text, (size_t)n, &envp, NULL), GV_OK);
    T_CHECK(envp && envp[0] && !envp[1] && strlen(envp[0]) == 258 && envp[0][0] == 'N');
    gv_rootenv_free(envp);
    free(text);
    free(want);
    /* a NUL byte makes its line invalid, the next line still counts */
    static const char nul[] = "A=x\0y\nB=2\nC\0=3\n";
    expect_n(nul, sizeof nul - 1, "B=2", __LINE__);
}

static void put(const char *rel, const char *text)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    gv_mkdirs(p, 0755);
    *slash = '/';
    FILE *f = fopen(p, "w");
    T_CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void expect_read(const char *root, const char *want, int line)
{
    char **envp = NULL;
    int rc = gv_rootenv_read(root, &envp, NULL);
    char *got = joined(envp);
    t_checks++;
    if (rc != GV_OK || !envp || !got || strcmp(got, want)) {
        t_failed++;
        fprintf(stderr, "line %d: root %s: rc %d, got \"%s\", want \"%s\"\n", line, root, rc,
                got ? got : "(null)", want);
    }
    free(got);
    gv_rootenv_free(envp);
}

static void check_read(void)
{
    char r[400], p[600], host[400];
    /* the root's own file */
    snprintf(r, sizeof r, "%s/plain", tmpdir);
    put("plain/etc/environment", "export LD_LIBRARY_PATH=\"/opt/rocm/lib\"\nHIP_VISIBLE_DEVICES=0");
    expect_read(r, "LD_LIBRARY_PATH=/opt/rocm/lib|HIP_VISIBLE_DEVICES=0", __LINE__);
    /* no file: no variables */
    snprintf(r, sizeof r, "%s/none", tmpdir);
    put("none/etc/hostname", "x\n");
    expect_read(r, "", __LINE__);
    /* a link to a host file (absolute, and climbing out): read inside the root */
    snprintf(host, sizeof host, "%s/host-environment", tmpdir);
    put("host-environment", "LD_LIBRARY_PATH=/HOST-ONLY\n");
    snprintf(r, sizeof r, "%s/linked", tmpdir);
    put("linked/etc/hostname", "x\n");
    snprintf(p, sizeof p, "%s/etc/environment", r);
    T_EQ_INT(symlink(host, p), 0);
    expect_read(r, "", __LINE__); /* the target does not exist inside the root */
    char inroot[600];
    snprintf(inroot, sizeof inroot, "linked%s", host);
    put(inroot, "LD_LIBRARY_PATH=/in-root\n");
    expect_read(r, "LD_LIBRARY_PATH=/in-root", __LINE__);
    snprintf(r, sizeof r, "%s/climb", tmpdir);
    put("climb/etc/hostname", "x\n");
    snprintf(p, sizeof p, "%s/etc/environment", r);
    char up[700];
    snprintf(up, sizeof up, "../../../../../../../../../../..%s", host);
    T_EQ_INT(symlink(up, p), 0);
    expect_read(r, "", __LINE__);
    /* not a regular file, or too large: no variables, no failure */
    snprintf(r, sizeof r, "%s/dir", tmpdir);
    put("dir/etc/environment/x", "A=1\n");
    expect_read(r, "", __LINE__);
    snprintf(r, sizeof r, "%s/fifo", tmpdir);
    put("fifo/etc/hostname", "x\n");
    snprintf(p, sizeof p, "%s/etc/environment", r);
    T_EQ_INT(mkfifo(p, 0644), 0);
    expect_read(r, "", __LINE__);
    snprintf(r, sizeof r, "%s/huge", tmpdir);
    char *huge = malloc(GV_ROOTENV_FILE_MAX + 16);
    memset(huge, '#', GV_ROOTENV_FILE_MAX + 8);
    memcpy(huge + GV_ROOTENV_FILE_MAX + 8, "\nA=1\n", 6);
    put("huge/etc/environment", huge);
    free(huge);
    expect_read(r, "", __LINE__);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gv-rootenv-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    T_RUN(check_format);
    T_RUN(check_limits);
    T_RUN(check_read);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    system(cmd);
    return t_done();
}
