/* Fuzz target: the compile check's reader of compiler diagnostics
 * (src/port/hipcc.c), whose input quotes the user's source text. Each line
 * of the input is split; on success the parts must lie inside the line,
 * the file be non-empty, line and column positive, the severity one of three. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "port/hipcc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *end = buf + strlen(buf);
    for (char *line = buf; line < end;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t len = strlen(line);
        struct gv_port_diag d;
        if (gv_port_split_diagnostic(line, &d) == 0 &&
            (d.file != line || !d.file[0] || d.line <= 0 || d.column <= 0 ||
             d.message < line || d.message > line + len ||
             (strcmp(d.severity, "error") != 0 && strcmp(d.severity, "warning") != 0 &&
              strcmp(d.severity, "note") != 0)))
            __builtin_trap();
        line = nl ? nl + 1 : end;
    }
    free(buf);
    return 0;
}
