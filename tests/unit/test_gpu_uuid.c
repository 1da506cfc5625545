/* GPU UUIDs written as the vendors' tools write them (src/kb/gpu_uuid.c).
 * Expected strings are typed by hand in nvidia-smi's and rocminfo's formats. */
#include <string.h>

#include "kb/gpu_uuid.h"
#include "t.h"

static void cuda_bytes(void)
{
    const unsigned char b[16] = {0x5f, 0x3a, 0x0b, 0x2c, 0x91, 0xde, 0x4e, 0x77,
                                 0x8a, 0x01, 0xc2, 0xd3, 0xe4, 0xf5, 0x06, 0xff};
    char out[KB_GPU_UUID_MAX];
    T_EQ_INT(kb_gpu_uuid_cuda(b, out), 0);
    T_EQ_STR(out, "GPU-5f3a0b2c-91de-4e77-8a01-c2d3e4f506ff");
    T_EQ_INT(strlen(out), KB_GPU_UUID_MAX - 1);
    const unsigned char zero[16] = {0};
    T_EQ_INT(kb_gpu_uuid_cuda(zero, out), -1);
    T_EQ_STR(out, "");
}

static void hip_chars(void)
{
    char out[KB_GPU_UUID_MAX];
    T_EQ_INT(kb_gpu_uuid_hip("3c6a1d2ba0f95e17", out), 0);
    T_EQ_STR(out, "GPU-3c6a1d2ba0f95e17");
    T_EQ_INT(kb_gpu_uuid_hip("3C6A1D2BA0F95E17", out), 0);
    T_EQ_STR(out, "GPU-3c6a1d2ba0f95e17");
    /* an agent without a UUID: "XX" and zero bytes */
    const char none[16] = {'X', 'X'};
    T_EQ_INT(kb_gpu_uuid_hip(none, out), -1);
    T_EQ_STR(out, "");
    const char shorter[16] = "3c6a1d2ba0f95e";
    T_EQ_INT(kb_gpu_uuid_hip(shorter, out), -1);
}

int main(void)
{
    T_RUN(cuda_bytes);
    T_RUN(hip_chars);
    return t_done();
}
