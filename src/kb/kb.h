/* The knowledge base: facts about the ROCm / CUDA / PyTorch ecosystem as data.
 *
 * Every table lives in src/kb/kb_tables.c, one table per fact, and every row
 * (or table) names its source in docs/facts/rocm-facts.md (section
 * number and the short source name used there). To teach gpuvet a new
 * release, add rows there; the query functions below need no change.
 *
 * Version strings are compared numerically component by component
 * ("6.10" > "6.9"); a "+local" label and a "-build" suffix are ignored. */
#ifndef GV_KB_KB_H
#define GV_KB_KB_H

#include <stddef.h>

#define KB_MAX_VARIANTS 4

/* §1: one PyTorch release line and the ROCm wheel variants it was published for. */
struct kb_torch_line {
    const char *torch;                        /* "2.3" */
    const char *rocm[KB_MAX_VARIANTS];         /* wheel variants, oldest first: "5.7", "6.0" */
    const char *stable_rocm;                  /* "Stable ROCm" in the release matrix */
    const char *torchvision;                  /* matching torchvision line, NULL if unknown */
    const char *source;
};

/* §2a: gfx targets compiled into the official wheels of torch lines [from, to]
 * when built for ROCm in [rocm_min, rocm_max] (NULL = unbounded). */
struct kb_wheel_arch {
    const char *torch_from, *torch_to;
    const char *rocm_min, *rocm_max;
    const char *archs;                        /* ";"-separated, as PYTORCH_ROCM_ARCH */
    const char *source;
};

/* §2b: gfx targets AMD officially supports on Linux, per ROCm release line. */
struct kb_rocm_support {
    const char *rocm;                         /* "6.0" */
    const char *archs;                        /* ";"-separated */
    const char *source;
};

/* §2c: a GPU target. */
struct kb_gpu {
    const char *gfx;                          /* "gfx1030" */
    const char *family;                       /* "GCN5", "CDNA2", "RDNA2", ... */
    const char *isa;                          /* ISA group for override safety: "gfx9",
                                                 "rdna1", "rdna2", "rdna3", "rdna3.5", "rdna4" */
    int apu;                                  /* integrated GPU */
    unsigned gfx_target_version;              /* KFD sysfs value, e.g. 100300 */
    const char *products;
    const char *source;
};

/* §4b: SONAME of one library per ROCm major (NULL = none / unknown). */
struct kb_soname {
    const char *name;                         /* logical name as in snapshot-schema.md */
    const char *rocm5, *rocm6, *rocm7;
    const char *source;
};

/* §2b: HIP runtime version prefix -> ROCm release. */
struct kb_hip_version {
    const char *hip;                          /* "6.2.41134" (matched as prefix of a string
                                                 like "6.2.41134-dd7f95766") */
    const char *rocm;                         /* "6.2.1" (or "6.2" when several share it) */
    const char *source;
};

/* §5: kernel driver (amdgpu KMD) release -> supported user-space releases. */
struct kb_kmd {
    const char *kmd;                          /* "6.1" or "30.10" */
    const char *user_min, *user_max;          /* inclusive release lines */
    const char *source;
};

/* §6: an environment variable that changes numerics, kernel choice, visibility,
 * speed or debugging behaviour. */
enum kb_env_kind {
    KB_ENV_NUMERICS,   /* changes results (precision, algorithm, summation order) */
    KB_ENV_KERNELS,    /* changes which kernels or libraries run (results may change) */
    KB_ENV_DEBUG,      /* debugging/serialising switch that costs speed if left on */
    KB_ENV_VISIBILITY, /* which GPUs are seen */
    KB_ENV_OVERRIDE,   /* HSA_OVERRIDE_GFX_VERSION (its own rule) */
    KB_ENV_BUILD,      /* only matters at build time */
    KB_ENV_TOOLING,    /* injects a profiler/debugger (DCGM's deny list) */
};
struct kb_env {
    const char *name;                         /* exact name, or a prefix ending in '*' */
    enum kb_env_kind kind;
    const char *effect;
    const char *dflt;                         /* the default, in words */
    const char *quiet;                        /* values that mean "off" (";"-separated,
                                                 NULL: any value is noteworthy) */
    const char *source;
};

/* §8: a known error message. */
struct kb_error {
    const char *pattern;                      /* substring to look for (case-sensitive) */
    const char *meaning;
    const char *fix;
    const char *source;
};

/* §3: what happens when a GPU of target real pretends to be target as. */
enum kb_verdict { KB_OVERRIDE_SAFE, KB_OVERRIDE_RISKY, KB_OVERRIDE_UNSAFE };
struct kb_override {
    const char *real;                         /* "gfx1031" */
    const char *as;                           /* "gfx1030" */
    enum kb_verdict verdict;
    const char *note;
    const char *source;
};

/* §4b, §7a, §8: when a GPU target lost the bundled rocBLAS Tensile kernels. */
struct kb_tensile_gap {
    const char *gfx;
    const char *rocm_from;                    /* first ROCm line without kernels */
    const char *last_good_rocm;               /* newest wheel line known to work */
    const char *source;
};

/* NVIDIA: minimum driver per CUDA runtime line (not in docs/facts/rocm-facts.md). */
struct kb_cuda_driver {
    const char *cuda;                         /* "12" (major, minor-version compatibility) */
    const char *min_driver;                   /* "525.60.13" */
    const char *source;
};

/* Table access: each returns the table and stores its length in *n. */
const struct kb_torch_line *kb_torch_lines(size_t *n);
const struct kb_wheel_arch *kb_wheel_archs(size_t *n);
const struct kb_rocm_support *kb_rocm_supports(size_t *n);
const struct kb_gpu *kb_gpus(size_t *n);
const struct kb_soname *kb_sonames(size_t *n);
const struct kb_hip_version *kb_hip_versions(size_t *n);
const struct kb_kmd *kb_kmds(size_t *n);
const struct kb_env *kb_envs(size_t *n);

/* ATen operations whose results may differ from run to run with the same
 * inputs (on CUDA: atomics in the reduction), as torch.use_deterministic_algorithms
 * documents them. op is the name without "aten." and overload. NULL when the
 * op is not listed; else why. */
const char *kb_nondeterministic_op(const char *aten_name);

/* Libraries whose copy decides what a PyTorch process computes: the GPU
 * stacks (also the pieces wheels bundle: cuDNN's sub-libraries, cuBLASLt,
 * nvJitLink, aotriton ...), PyTorch's own, and the CPU BLAS/oneDNN/SLEEF
 * that torch:cpu computes with. stem matches "stem.so" and "stem.so.N...",
 * and with prefix set also "stemANYTHING.so...". */
struct kb_framework_lib {
    const char *stem;   /* "libcudnn", "libtorch" */
    int prefix;         /* 1: "libcudnn_ops.so.9" matches "libcudnn" too */
    const char *source;
};
const struct kb_framework_lib *kb_framework_libs(size_t *n);
/* The stem of filename when it is such a library ("libcudnn_ops" for
 * "libcudnn_ops.so.9.1.0"), else NULL-terminated "" and 0. */
int kb_framework_lib_name(const char *filename, char *name, size_t n);

const struct kb_error *kb_errors(size_t *n);
const struct kb_override *kb_overrides(size_t *n);
const struct kb_tensile_gap *kb_tensile_gaps(size_t *n);
const struct kb_cuda_driver *kb_cuda_drivers(size_t *n);

#define KB_WHEEL_INDEX "https://download.pytorch.org/whl/rocm"

/* ---- versions ---- */
/* Numeric comparison of dotted versions: <0, 0, >0. Missing components count
 * as 0 ("6.0" == "6.0.0"); "+label" and "-suffix" are ignored. NULL sorts first. */
int kb_vercmp(const char *a, const char *b);
/* Compare only the first n components ("6.0.2" vs "6.0", n=2: equal). */
int kb_vercmp_n(const char *a, const char *b, int n);
/* "6.0.2-66" -> "6.0" into buf (size >= 16). Returns buf, or NULL if a is not a version. */
char *kb_major_minor(const char *v, char *buf, size_t size);
/* Major number, -1 when not a version. */
int kb_major(const char *v);
/* Local label of a wheel version: "2.3.0+rocm6.0" -> "rocm6.0"; NULL if none. */
const char *kb_local_label(const char *version);
/* Public part: "2.3.0+rocm6.0" -> "2.3.0" into buf. */
char *kb_public_version(const char *version, char *buf, size_t size);
/* Debian/RPM package version of a ROCm package -> ROCm release "X.Y.Z":
 * "6.0.0.60000-91~22.04" or "1:6.16.6.30100000-2212064.22.04" (amdgpu-dkms). The
 * ROCm integer is MAJOR*10000+MINOR*100+PATCH (§5); an 8-digit integer is the
 * amdgpu 30.x driver release (MAJOR*1000000+MINOR*10000+PATCH*100 [inferred]). */
char *kb_release_from_pkgver(const char *pkgver, char *buf, size_t size);

/* ---- queries ---- */
const struct kb_torch_line *kb_torch_line(const char *torch_version);
/* Newest torch line with a wheel for ROCm line rocm_mm ("6.0"); NULL if none. */
const struct kb_torch_line *kb_torch_for_rocm(const char *rocm_mm);
/* Does torch line t have a wheel variant for ROCm rocm_mm? Returns the
 * variant spelling ("6.2.4") or NULL. */
const char *kb_torch_variant(const struct kb_torch_line *t, const char *rocm_mm);
/* gfx targets of the official wheel (torch version, ROCm of the wheel);
 * NULL when the kb has no row for it. */
const struct kb_wheel_arch *kb_wheel_arch(const char *torch, const char *rocm);
/* Oldest torch line whose official wheel (any variant) contains gfx; NULL if none. */
const char *kb_first_torch_with_arch(const char *gfx);
int kb_arch_in_list(const char *list, const char *gfx); /* ";"- or ","-separated */
const struct kb_rocm_support *kb_rocm_support(const char *rocm);
const struct kb_gpu *kb_gpu_by_gfx(const char *gfx);
const struct kb_gpu *kb_gpu_by_target_version(unsigned v);
/* gfx name from a KFD gfx_target_version or an override triple:
 * "gfx" + dec(major) + hex(minor) + hex(stepping). */
void kb_gfx_name(unsigned major, unsigned minor, unsigned stepping, char *buf, size_t size);
/* Parse HSA_OVERRIDE_GFX_VERSION exactly as libhsakmt does ("%u.%u.%u", no
 * trailing characters, major <= 63, minor/stepping <= 255). 0 on success. */
int kb_parse_override(const char *value, unsigned *major, unsigned *minor, unsigned *stepping);
/* Verdict for a real target pretending to be another: the table row, or NULL
 * when the kb has no row (callers then judge by ISA group). */
const struct kb_override *kb_override(const char *real, const char *as);
const struct kb_soname *kb_soname(const char *name);
const char *kb_soname_for(const struct kb_soname *s, int rocm_major);
/* The ROCm majors whose libraries carry this SONAME, as a bit mask
 * (1 << major); 0 when the kb does not know it. */
unsigned kb_soname_majors(const char *soname);
/* ROCm release from a HIP version string ("6.0.32830-d62f6a171" -> "6.0.0");
 * falls back to HIP major.minor (always equal to the ROCm line). NULL if not a version. */
const char *kb_rocm_from_hip(const char *hip, char *buf, size_t size);
/* KMD row for a driver release ("6.1.3", "30.10.1"); NULL if unknown. */
const struct kb_kmd *kb_kmd(const char *kmd_release);
int kb_kmd_supports(const struct kb_kmd *k, const char *user_release);
const struct kb_env *kb_env(const char *name);
/* Is value one of the env entry's "quiet" values (off / default)? */
int kb_env_is_quiet(const struct kb_env *e, const char *value);
const struct kb_error *kb_error_match(const char *text);
const struct kb_tensile_gap *kb_tensile_gap(const char *gfx, const char *rocm);
const struct kb_cuda_driver *kb_cuda_driver(const char *cuda_version);

#endif
