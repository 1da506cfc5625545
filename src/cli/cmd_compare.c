/* gpuvet compare: placeholder until the command lands. */
#include <string.h>

#include "cli/cli.h"

int cmd_compare(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
        return cli_help("usage: gpuvet compare\n\nNot implemented yet.\n");
    return cli_failf("'compare' is not implemented yet");
}
