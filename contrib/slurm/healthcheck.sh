#!/usr/bin/env bash
# gpuvet as a Slurm HealthCheckProgram (slurm.conf: HealthCheckProgram=/usr/share/gpuvet/
# contrib/slurm/healthcheck.sh, HealthCheckInterval=...). Slurm kills a health check at 60 s
# and ignores its exit status, so everything is done by prolog.sh in --healthcheck mode:
# the prolog tier within GPUVET_TIMEOUT (55 s), scontrol drain on "drain" (exit 1), nothing
# on "keep" (exit 0, and with GPUVET_RESUME=1 a node gpuvet drained is resumed), nothing on
# "cannot assess" unless GPUVET_ON_CANNOT_ASSESS=drain. Settings: see prolog.sh.
here=$(dirname -- "$(readlink -f -- "$0")")
exec /usr/bin/env bash "$here/prolog.sh" --healthcheck
