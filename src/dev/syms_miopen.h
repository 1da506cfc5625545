/* MIOpen subset (libMIOpen.so.1): miopenGetVersion(major, minor, patch), MIOpen API
 * reference "Handle" section; miopenStatusSuccess = 0. */
#ifndef GV_DEV_SYMS_MIOPEN_H
#define GV_DEV_SYMS_MIOPEN_H

#include <stddef.h>

#define GV_SYMS_MIOPEN(X)                                                                    \
    X(REQ, miopenGetVersion, int, (size_t *, size_t *, size_t *), "miopenGetVersion")

#endif
