// CUDA APIs and libraries: some have HIP counterparts, some do not.
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <nvml.h>
#include <cutlass/gemm/device/gemm.h>
#include <cuda.h>

void setup(CUtensorMap *map, void *base)
{
    cudaMalloc(&base, 1 << 20);
    cublasHandle_t h;
    cublasCreate(&h);
    cudnnHandle_t dnn;
    cudnnCreate(&dnn);
    cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, 0, 0, 0, 0,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                           CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    nvmlInit();
    nvmlShutdown();
}
