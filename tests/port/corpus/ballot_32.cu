// Votes and ballots stored in 32-bit integers.
#include <stdint.h>

__global__ void votes(const int *flags, int *count, int *first)
{
    int p = flags[threadIdx.x] != 0;
    unsigned int ballot = __ballot_sync(__activemask(), p);
    uint32_t active = __activemask();
    int n = __popc(__ballot(p));
    int any = __any_sync(0xFFFFFFFF, p);
    int all = __all_sync(~0u, p);
    if (threadIdx.x == 0) {
        count[0] = n + __popc(ballot) + any + all;
        first[0] = __ffs((unsigned)__ballot(p)) + (int)active;
    }
}
