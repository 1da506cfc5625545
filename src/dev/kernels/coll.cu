// Collective benchmark helpers (src/bench/coll.c). Every rank's send buffer
// holds small integers, element j of rank q being (q+1)*((j % 13)+1), so every
// sum over ranks is exact in fp32 in any order (at most 13*n(n+1)/2). After each
// timed collective gv_coll_check compares the output with the exact values and
// counts mismatches into bad[0]. The output starts as NaN; when a later
// iteration writes to the same place (poison != 0) the check writes NaN again,
// so that collective must write it anew to pass. (Only then: dirty lines left in
// the L2 cache would be written back during the next timed collective.)
#define GV_COLL_ALL_REDUCE 0
#define GV_COLL_ALL_GATHER 1
#define GV_COLL_REDUCE_SCATTER 2
#define GV_COLL_BROADCAST 3
#define GV_COLL_ALL_TO_ALL 4

__device__ __forceinline__ float gv_coll_val(gv_i64 q, gv_i64 j)
{
    return (float)((q + 1) * (j % 13 + 1));
}

GV_KERNEL gv_coll_fill(float *p, gv_i64 n, int rank)
{
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride())
        p[i] = gv_coll_val(rank, i);
}

// out: this rank's output slice of n elements; soff: where the send slice
// starts in the send buffer (elements); cnt: the per-call count.
GV_KERNEL gv_coll_check(float *out, gv_i64 n, int op, int rank, int nranks, gv_i64 soff,
                        gv_i64 cnt, unsigned long long *bad, int poison)
{
    gv_i64 sum = (gv_i64)nranks * (nranks + 1) / 2;
    unsigned long long miss = 0;
    for (gv_i64 i = gv_tid(); i < n; i += gv_stride()) {
        float e;
        if (op == GV_COLL_ALL_REDUCE)
            e = (float)(sum * ((soff + i) % 13 + 1));
        else if (op == GV_COLL_REDUCE_SCATTER)
            e = (float)(sum * ((soff + rank * cnt + i) % 13 + 1));
        else if (op == GV_COLL_BROADCAST)
            e = gv_coll_val(0, soff + i);
        else if (op == GV_COLL_ALL_GATHER)
            e = gv_coll_val(i / cnt, soff + i % cnt);
        else
            e = gv_coll_val(i / cnt, soff + rank * cnt + i % cnt);
        if (!(out[i] == e))
            miss++;
        if (poison)
            out[i] = GV_FLOAT(0xffffffffu);
    }
    if (miss)
        atomicAdd(bad, miss);
}

// Test hook (GPUVET_TEST_COLL_CORRUPT): one wrong element after a collective.
GV_KERNEL gv_coll_poke(float *p)
{
    if (gv_tid() == 0)
        p[0] = p[0] + 1.0f;
}

// Holds the stream until the host sets *flag (so that the timed collectives
// are all queued before the first one starts and the events time the GPU, not
// the host's enqueueing), or until max_ns have passed, so that it can never
// hold the stream for good.
#if defined(__HIPCC_RTC__) || defined(__HIP__)
GV_KERNEL gv_coll_gate(volatile unsigned *flag, gv_i64 max_ns)
{
    for (gv_i64 i = 0; i < max_ns && *flag == 0u; i++) {
    }
}
#else
__device__ __forceinline__ gv_i64 gv_coll_ns(void)
{
    gv_i64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
GV_KERNEL gv_coll_gate(volatile unsigned *flag, gv_i64 max_ns)
{
    gv_i64 t0 = gv_coll_ns();
    while (*flag == 0u && gv_coll_ns() - t0 < max_ns) {
    }
}
#endif
