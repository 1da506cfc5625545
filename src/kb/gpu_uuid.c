/* GPU UUIDs as the vendors write them.
 *
 * CUDA: cuDeviceGetUuid_v2 (CUDA 11.4 and later) and cuDeviceGetUuid return
 * "a 16-byte unsigned char array" (CUuuid) identifying the device (CUDA Driver
 * API reference, "Device Management", docs.nvidia.com/cuda/cuda-driver-api);
 * nvidia-smi -L and nvmlDeviceGetUUID write the same UUID as
 * "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (NVML reference,
 * nvmlDeviceGetUUID: "a 5 part hexadecimal string"). On a device in MIG mode
 * _v2 gives the MIG instance's UUID; it is written the same way here.
 *
 * AMD: ROCr's HSA_AMD_AGENT_INFO_UUID is "an Ascii string with a maximum of
 * 21 chars including NUL ... header and body. The header identifies device
 * type (GPU, CPU, DSP) while body encodes UUID as a 16 digit hex string";
 * agents without one give "GPU-XX" (ROCR-Runtime, inc/hsa_ext_amd.h).
 * rocminfo prints that string ("Uuid: GPU-..."), and HIP's hipDeviceGetUuid
 * (ROCm/clr, hipamd/src/hip_device_runtime.cpp) copies the 16 characters of
 * its body into hipUUID.bytes. So "GPU-" plus those characters is the id
 * rocminfo, rocm-smi and ROCR_VISIBLE_DEVICES use (docs/facts/rocm-facts.md,
 * "ROCR_VISIBLE_DEVICES: indices or UUIDs"). */
#include "kb/gpu_uuid.h"

#include <ctype.h>
#include <stdio.h>

int kb_gpu_uuid_cuda(const unsigned char b[16], char out[KB_GPU_UUID_MAX])
{
    int any = 0;
    for (int i = 0; i < 16; i++)
        any |= b[i];
    out[0] = '\0';
    if (!any)
        return -1;
    snprintf(out, KB_GPU_UUID_MAX,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return 0;
}

int kb_gpu_uuid_hip(const char b[16], char out[KB_GPU_UUID_MAX])
{
    out[0] = '\0';
    for (int i = 0; i < 16; i++)
        if (!isxdigit((unsigned char)b[i]))
            return -1;
    char *p = out + snprintf(out, KB_GPU_UUID_MAX, "GPU-");
    for (int i = 0; i < 16; i++)
        *p++ = (char)tolower((unsigned char)b[i]);
    *p = '\0';
    return 0;
}
