// Test-only kernels, launched only when GPUVET_TEST_FAULT is set (tests/gpu):
// an illegal address, and a kernel that spins for a given number of clock
// ticks, to prove that a fault or a timeout fails one case and the device is
// usable again for the next.
GV_KERNEL gv_test_fault(float *p)
{
    float *bad = (float *)(p + (1ll << 40));
    bad[threadIdx.x] = 1.0f;
}

GV_KERNEL gv_test_spin(float *p, gv_i64 ticks)
{
    gv_i64 start = clock64();
    while (clock64() - start < ticks) {
    }
    if (threadIdx.x == 0)
        p[0] = 1.0f;
}
