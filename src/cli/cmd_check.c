/* gpuvet check: placeholder until the command lands. */
#include <string.h>

#include "cli/cli.h"

int cmd_check(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
        return cli_help("usage: gpuvet check\n\nNot implemented yet.\n");
    return cli_failf("'check' is not implemented yet");
}
