/* "Tag says X, content says Y" (issue 33): a tag (image.tag, image.tags) or a
 * label (org.opencontainers.image.version, com.nvidia.cuda.version, any label
 * naming rocm/cuda/torch and a version) of an image snapshot (docs/image.md)
 * that names a ROCm, CUDA or PyTorch version the content contradicts: the
 * ROCm and CUDA installs of stacks, the CUDA runtime of libraries (cudart),
 * and the torch of each Python environment. A claim is compared on as many
 * components as it gives ("6.4" matches 6.4.3; "12.4.1" only 12.4.1); a kind
 * the content does not hold at all is not judged. Nothing here prints. */
#ifndef GV_KB_IMAGE_TAGS_H
#define GV_KB_IMAGE_TAGS_H

#include <jansson.h>

/* Appends to out_array one finding per contradicted claim, each an object
 * {"id": "image-tag", "severity": "warning", "message": "...",
 *  "evidence": [{"path": "image.tags[0]", "value": "rocm/pytorch:rocm6.4_..."},
 *               {"path": "stacks.installs[0].version", "value": "5.7.1"}, ...],
 *  "kind": "rocm"|"cuda"|"torch", "claimed": "6.4"}.
 * snap: a snapshot; without a collected image section nothing is added.
 * Returns the number of findings added. */
int gv_kb_image_tag_findings(const json_t *snap, json_t *out_array);

#endif
