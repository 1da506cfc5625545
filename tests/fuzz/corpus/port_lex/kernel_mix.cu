#include <cudnn.h>
#define WS 32
#define M 0xffffffff
constexpr unsigned long long W = 0xffffffffull;
__shared__ int q[4][32], r[blockDim.x >> 5];
__device__ int f(int v) {
  for (int k = 16; k; k >>= 1) v += __shfl_xor_sync(M, v, k, WS);
  unsigned b = __ballot_sync(W, v); asm("mov.b32 %0, %%laneid;" : "=r"(v));
  return __popc(__activemask()) + (threadIdx.x % 32) + q[0][v] + (int)b; }
