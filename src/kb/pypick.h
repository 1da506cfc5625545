/* Which Python runs --device torch:... when the user names none: a rule over
 * a snapshot's "python" section (docs/snapshot-schema.md). */
#ifndef GV_KB_PYPICK_H
#define GV_KB_PYPICK_H

#include <jansson.h>
#include <stddef.h>

/* The interpreter of the first environment whose torch is a GPU build (rocm
 * or cuda) when want_gpu, else of the first with any torch; when none has
 * torch, "python3". path gets the interpreter, why one readable sentence.
 * Returns 1 when an environment was found, 0 for the python3 fallback. */
int gv_pick_torch_python(const json_t *python, int want_gpu, char *path, size_t pathsz,
                         char *why, size_t whysz);

#endif
