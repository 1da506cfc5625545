#include "env/filehash.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "base/sha256.h"

struct run_ctx {
    struct gv_hash_job *jobs;
    size_t n;
    atomic_size_t next;
};

static void *worker(void *arg)
{
    struct run_ctx *rc = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&rc->next, 1);
        if (i >= rc->n)
            return NULL;
        struct gv_err e = {0};
        struct gv_hash_job *j = &rc->jobs[i];
        j->rc = gv_sha256_file_hex(j->path, j->hex, &e);
        if (j->rc)
            snprintf(j->err, sizeof j->err, "%s", e.msg);
    }
}

void gv_filehash_run(struct gv_hash_job *jobs, size_t n, int nthreads)
{
    struct run_ctx rc = {.jobs = jobs, .n = n};
    atomic_init(&rc.next, 0);
    if (nthreads > 8)
        nthreads = 8;
    pthread_t th[8];
    int started = 0;
    for (int i = 1; i < nthreads && (size_t)i < n; i++)
        if (pthread_create(&th[started], NULL, worker, &rc) == 0)
            started++;
    worker(&rc);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}
