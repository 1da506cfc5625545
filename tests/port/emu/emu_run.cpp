// Runs each kernel of kernels.h on the CPU emulation (wave.hpp) with
// wavefronts of 32 and of 64 lanes and prints one line per run:
//     KERNEL WAVE GOT WANT VIOLATIONS
// (GOT: the kernel's result; WANT: the right one, computed here on the host;
// VIOLATIONS: calls whose mask left out the calling lane). The verdict is the
// test's (tests/cli/port_emu.sh), not this program's.
#include "wave.hpp"

#include "kernels.h"

#include <cstdio>

typedef void (*kernel_fn)(const int *, int *);

static const int kThreads = 256;

static void inputs(int *in)
{
    // Mixed signs, no pattern a partial sum could hit by chance.
    for (int i = 0; i < kThreads; i++)
        in[i] = (i * 37 + 11) % 23 - 7;
}

static void run(const char *name, kernel_fn k, int wave, int want, bool sum_out)
{
    int in[kThreads], out[kThreads] = {0};
    inputs(in);
    gvemu::violations() = 0;
    gvemu::launch(wave, kThreads, k, (const int *)in, (int *)out);
    int got = out[0];
    if (sum_out) {
        got = 0;
        for (int i = 0; i < kThreads; i++)
            got += out[i];
    }
    std::printf("%s %d %d %d %d\n", name, wave, got, want, gvemu::violations());
}

int main()
{
    int in[kThreads], sum = 0, positive = 0;
    inputs(in);
    for (int i = 0; i < kThreads; i++) {
        sum += in[i];
        positive += in[i] > 0;
    }
    for (int wave = 32; wave <= 64; wave += 32) {
        run("reduce_w32", reduce_w32, wave, sum, false);
        run("reduce_ws", reduce_ws, wave, sum, false);
        run("reduce_off16", reduce_off16, wave, sum, false);
        run("ballot_u32", ballot_u32, wave, positive, true);
        run("ballot_u64", ballot_u64, wave, positive, true);
    }
    return 0;
}
