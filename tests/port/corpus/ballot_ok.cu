// Votes with 64-bit masks: zero findings.
#include <stdint.h>

__global__ void votes(const int *flags, int *count)
{
    int p = flags[threadIdx.x] != 0;
    uint64_t ballot = __ballot(p);
    unsigned long long active = __activemask();
    int any = __any(p), all = __all(p);
    if (threadIdx.x == 0)
        count[0] = __popcll(ballot) + __popcll(active) + any + all;
}
