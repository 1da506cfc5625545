/* A very small test harness: checks print both sides and the line. */
#ifndef GV_TEST_T_H
#define GV_TEST_T_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_checks, t_failed;

#define T_CHECK(cond)                                                                        \
    do {                                                                                     \
        t_checks++;                                                                          \
        if (!(cond)) {                                                                       \
            t_failed++;                                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
        }                                                                                    \
    } while (0)

#define T_EQ_INT(a, b)                                                                       \
    do {                                                                                     \
        long long t_a = (long long)(a), t_b = (long long)(b);                                \
        t_checks++;                                                                          \
        if (t_a != t_b) {                                                                    \
            t_failed++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, \
                    #b, t_a, t_b);                                                           \
        }                                                                                    \
    } while (0)

#define T_EQ_STR(a, b)                                                                       \
    do {                                                                                     \
        const char *t_a = (a), *t_b = (b);                                                   \
        t_checks++;                                                                          \
        if (!t_a || !t_b || strcmp(t_a, t_b) != 0) {                                         \
            t_failed++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                    #a, #b, t_a ? t_a : "(null)", t_b ? t_b : "(null)");                     \
        }                                                                                    \
    } while (0)

#define T_NEAR(a, b, tol)                                                                    \
    do {                                                                                     \
        double t_a = (a), t_b = (b);                                                         \
        t_checks++;                                                                          \
        if (!(fabs(t_a - t_b) <= (tol))) {                                                   \
            t_failed++;                                                                      \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.17g vs %.17g\n", __FILE__, __LINE__,  \
                    #a, #b, t_a, t_b);                                                       \
        }                                                                                    \
    } while (0)

#define T_RUN(fn)                                                                            \
    do {                                                                                     \
        int t_before = t_failed;                                                             \
        fn();                                                                                \
        fprintf(stderr, "%s %s\n", t_failed == t_before ? "ok  " : "FAIL", #fn);             \
    } while (0)

static inline int t_done(void)
{
    fprintf(stderr, "%d checks, %d failed\n", t_checks, t_failed);
    if (t_checks == 0)
        return 1; /* a test that checked nothing is a failure */
    return t_failed ? 1 : 0;
}

#endif
