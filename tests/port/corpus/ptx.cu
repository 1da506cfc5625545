// Inline PTX, and AMD assembly that is fine.
__device__ unsigned lane_id_ptx()
{
    unsigned id;
    asm("mov.u32 %0, %%laneid;" : "=r"(id));
    return id;
}

__device__ void prefetch(const void *p)
{
    asm volatile(
        "prefetch.global.L2 [%0];\n"
        "membar.gl;" ::"l"(p));
}

__device__ void amd_wait()
{
    asm volatile("s_waitcnt vmcnt(0)" ::: "memory"); /* GCN assembly: not PTX */
}

__device__ int smid()
{
    int id;
    __asm__ __volatile__("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

__device__ void backoff(int *flag)
{
    while (atomicAdd(flag, 0) == 0)
        __nanosleep(100);
}
