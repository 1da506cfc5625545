// The kernels of kernels.h as one HIP translation unit, for the real hipcc of
// the trixie-hipcc fixture root (tests/cli/port_check.sh): which 32-lane
// assumptions the compiler rejects, for gfx90a (wave64) and gfx1100 (wave32).
#include <hip/hip_runtime.h>

#include "kernels.h"
