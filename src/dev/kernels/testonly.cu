// Test-only kernels, launched only when GPUVET_TEST_FAULT is set (tests/gpu):
// an illegal address, and a kernel that spins for a given number of clock
// ticks, to prove that a fault or a timeout fails one case and the device is
// usable again for the next.
GV_KERNEL gv_test_fault(float *p)
{
    float *bad = (float *)(p + (1ll << 40));
    bad[threadIdx.x] = 1.0f;
}

#if defined(__HIPCC_RTC__) || defined(__HIP__)
// HIP 5.7's clock64() needs s_memtime, which gfx11 lacks: spin on volatile
// reads instead (about one tick each is close enough for a watchdog test).
GV_KERNEL gv_test_spin(float *p, gv_i64 ticks)
{
    volatile float *v = p;
    for (gv_i64 i = 0; i < ticks / 4; i++)
        if (v[1] == 12345.0f)
            break;
    if (threadIdx.x == 0)
        p[0] = 1.0f;
}
#else
GV_KERNEL gv_test_spin(float *p, gv_i64 ticks)
{
    gv_i64 start = clock64();
    while (clock64() - start < ticks) {
    }
    if (threadIdx.x == 0)
        p[0] = 1.0f;
}
#endif
