#!/bin/bash
# gpuvet probe names flushed subnormals on the ftz emulation and kept ones on
# the plain CPU; a route that cannot open is an error naming the device.
set -u
. "$(dirname "$0")/lib.sh"
out=$("$GPUVET" probe --device cpu:emulate=ftz --dtype f16.out16) || fail "probe ftz"
echo "$out" | grep -q "input_subnormals     flushed" || { echo "$out"; fail "ftz inputs"; }
echo "$out" | grep -q "output_subnormals    flushed" || { echo "$out"; fail "ftz outputs"; }
out=$("$GPUVET" probe --dtype f16.out16) || fail "probe plain"
echo "$out" | grep -q "input_subnormals     kept" || { echo "$out"; fail "plain inputs"; }
"$GPUVET" probe --device cpu:emulate=nosuch >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad emulation is a usage error"
echo ok
