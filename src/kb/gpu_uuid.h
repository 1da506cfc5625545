/* A GPU's UUID as the vendors' own tools write it, from the bytes each
 * runtime hands out (sources in gpu_uuid.c). Pure functions. */
#ifndef GV_KB_GPU_UUID_H
#define GV_KB_GPU_UUID_H

/* "GPU-" plus 36 characters, and the NUL. */
#define KB_GPU_UUID_MAX 41

/* CUDA (cuDeviceGetUuid_v2 / cuDeviceGetUuid: 16 raw bytes): "GPU-" and the
 * bytes in lowercase hex grouped 8-4-4-4-12, as nvidia-smi -L writes them.
 * -1 (out "") when every byte is zero (no UUID). */
int kb_gpu_uuid_cuda(const unsigned char bytes[16], char out[KB_GPU_UUID_MAX]);

/* HIP on AMD (hipDeviceGetUuid: 16 bytes that are the ASCII characters of
 * the 16-digit hex unique id): "GPU-" and those characters, lowercase, as
 * rocminfo and rocm-smi write them. -1 (out "") when they are not 16 hex
 * digits (an agent without a UUID gives "XX"). */
int kb_gpu_uuid_hip(const char bytes[16], char out[KB_GPU_UUID_MAX]);

#endif
