/* NVML subset (libnvidia-ml.so.1, part of the NVIDIA driver): what gpuvet
 * bench records before and after it measures (clocks, power, temperature,
 * the reasons clocks are held down). Values from nvml.h (NVML API reference,
 * docs.nvidia.com/deploy/nvml-api): NVML_SUCCESS = 0; nvmlClockType_t
 * NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2;
 * nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0; clocks event (throttle)
 * reasons: GpuIdle 0x1, ApplicationsClocksSetting 0x2, SwPowerCap 0x4,
 * HwSlowdown 0x8, SyncBoost 0x10, SwThermalSlowdown 0x20, HwThermalSlowdown
 * 0x40, HwPowerBrakeSlowdown 0x80, DisplayClockSetting 0x100.
 * nvmlDeviceGetCurrentClocksEventReasons is the CUDA 12.2+ name of
 * nvmlDeviceGetCurrentClocksThrottleReasons (same signature). Power in mW. */
#ifndef GV_DEV_SYMS_NVML_H
#define GV_DEV_SYMS_NVML_H

typedef struct nvmlDevice_st *nvmlDevice_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

#define GV_SYMS_NVML(X)                                                                      \
    X(REQ, nvmlInit, int, (void), "nvmlInit_v2", "nvmlInit")                                 \
    X(REQ, nvmlShutdown, int, (void), "nvmlShutdown")                                        \
    X(REQ, nvmlDeviceGetHandleByPciBusId, int, (const char *, nvmlDevice_t *),              \
      "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId")                   \
    X(OPT, nvmlSystemGetDriverVersion, int, (char *, unsigned), "nvmlSystemGetDriverVersion") \
    X(OPT, nvmlDeviceGetClockInfo, int, (nvmlDevice_t, int, unsigned *), "nvmlDeviceGetClockInfo") \
    X(OPT, nvmlDeviceGetMaxClockInfo, int, (nvmlDevice_t, int, unsigned *),                 \
      "nvmlDeviceGetMaxClockInfo")                                                           \
    X(OPT, nvmlDeviceGetPowerUsage, int, (nvmlDevice_t, unsigned *), "nvmlDeviceGetPowerUsage") \
    X(OPT, nvmlDeviceGetEnforcedPowerLimit, int, (nvmlDevice_t, unsigned *),                \
      "nvmlDeviceGetEnforcedPowerLimit")                                                     \
    X(OPT, nvmlDeviceGetTemperature, int, (nvmlDevice_t, int, unsigned *),                  \
      "nvmlDeviceGetTemperature")                                                            \
    X(OPT, nvmlDeviceGetCurrentClocksEventReasons, int, (nvmlDevice_t, unsigned long long *), \
      "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")

#endif
