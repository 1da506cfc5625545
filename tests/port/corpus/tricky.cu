/* Things that look like findings but are comments, strings or continuations:
 *   __shfl_down_sync(0xffffffff, v, 16); int lane = threadIdx.x & 31;
 *   asm("mov.u32 %0, %%laneid;");  __nanosleep(10);  #include <nvml.h>
 */
// for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o); \
   int lane = threadIdx.x & 31;   <- still the comment (backslash-newline)
#include <stdio.h>

static const char *doc = "__shfl_sync(0xffffffff, v, 0) and threadIdx.x % 32";
static const char *raw = R"ptx(
    asm("mov.u32 %0, %%laneid;");
    int lane = threadIdx.x & 31;
)ptx";
static const char quote = '"';

#define LANE_OK(x) ((x) % warpSize)

__device__ int after_continuation(int v)
{
    int lane = \
        threadIdx.x & 31;
    return v + lane + quote;
}
