#!/usr/bin/env bash
# One grammar for every command (issue 36): every command and subcommand of the
# command table answers --help; the shared options (-o/--output, --json, and
# --python/--python-root/--image) are there and described the same way wherever
# they appear; options go after operands and '--' ends them; each command that
# makes a document writes it with -o FILE (atomically, "wrote FILE (N bytes)" on
# stderr) and prints it with --json. probe --device torch:cpu finds the
# interpreter that has torch (Debian's python3-torch in /usr/bin) even when the
# python3 first on PATH has none, and where an interpreter lacks torch its advice
# names an option probe takes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T
export GPUVET_DB=$T/history.db XDG_CACHE_HOME=$T/cache NO_COLOR=1
unset GPUVET_PYTHON GPUVET_PYTHON_ROOT GPUVET_RECORD

# ---- every command's and subcommand's --help, from the command table ----
cmds=$("$GPUVET" --help | awk '/^Commands:/ {f = 1; next} f && /^  [a-z]/ {print $1}')
[[ $(wc -w <<<"$cmds") -ge 10 ]] || fail "gpuvet --help lists too few commands: $cmds"
mkdir -p "$T/help"
for c in $cmds; do
    expect_rc 0 "$GPUVET" "$c" --help
    [[ -s $GV_OUT ]] || fail "gpuvet $c --help printed nothing"
    cp "$GV_OUT" "$T/help/$c"
    # subcommands: the words after 'gpuvet CMD' on the usage lines
    subs=$(sed -n "s/^\(usage:\|      \) *gpuvet $c \([a-z][a-z]*\)\b.*/\2/p" "$GV_OUT" | sort -u)
    for s in $subs; do
        expect_rc 0 "$GPUVET" "$c" "$s" --help
        [[ -s $GV_OUT ]] || fail "gpuvet $c $s --help printed nothing"
        cp "$GV_OUT" "$T/help/$c.$s"
    done
done
ls "$T/help" | grep -q '\.' || fail "no subcommand found in any usage text"

# The option lines of each help text: the option's names and its description (the
# rest of its line and the lines indented under it), whitespace folded.
/usr/bin/python3 - "$T/help" <<'EOF' || fail "shared options differ (above)"
import os, re, sys
d = sys.argv[1]
opt = re.compile(r"^ {2,6}((?:-[a-zA-Z], )?--[a-z][a-z-]*)(?:( [A-Z][A-Z_.]*) +| {2,}|$)(.*)$")
helps = {}
for name in sorted(os.listdir(d)):
    opts, cur = {}, None
    for line in open(os.path.join(d, name)):
        line = line.rstrip("\n")
        m = opt.match(line)
        if m:
            cur = m.group(1).split(", ")[-1]
            opts[cur] = (m.group(3) or "").strip()
        elif cur and re.match(r"^ {20,}\S", line):
            opts[cur] = (opts[cur] + " " + line.strip()).strip()
        else:
            cur = None
    helps[name] = opts
bad = []
def same(option, names):
    texts = {}
    for n in names:
        texts.setdefault(helps[n][option], []).append(n)
    if len(texts) > 1:
        bad.append("%s is described %d ways: %s" % (option, len(texts), "; ".join(
            "%s: %r" % (",".join(v), k) for k, v in texts.items())))
# Exceptions, each with its reason: report writes an HTML page (-o) and its --json
# describes what it wrote; plan writes the plan in its --format (--json: --format json);
# torch capture's -o is the capture file; verify's --image names the image to verify,
# not a root to run in.
out_except = {"report", "plan", "plan.rollback", "torch", "torch.capture", "torch.bisect"}
json_except = {"report", "plan", "plan.rollback"}
python_except = {"verify"}
with_json = [n for n in helps if "--json" in helps[n] and n not in json_except]
with_out = [n for n in helps if "--output" in helps[n] and n not in out_except]
if len(with_json) < 10:
    bad.append("only %d help texts have --json: %s" % (len(with_json), with_json))
same("--json", with_json)
same("--output", with_out)
for n in with_json:
    if n not in out_except and "--output" not in helps[n]:
        bad.append("%s has --json but no -o, --output" % n)
py = [n for n in helps if "--python" in helps[n] and n not in python_except]
for cmd in ("check", "bench", "probe", "ab", "torch"):
    if cmd not in py:
        bad.append("%s (a torch device user) has no --python" % cmd)
for o in ("--python", "--python-root", "--image"):
    for n in py:
        if o not in helps[n]:
            bad.append("%s has --python but not %s" % (n, o))
    same(o, [n for n in py if o in helps[n]])
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

# ---- documents: options after operands, -o FILE and --json ----
# NAME CMD...: run with --json -o FILE appended; FILE was said on stderr with its
# size. That stdout is the document FILE holds is checked for all at the end.
docs=()
doc_cmd() {
    local name=$1 f=$T/$1.json rc
    shift
    rc=0
    "$@" --json -o "$f" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [[ $rc == 0 || $rc == 1 ]] || { cat "$T/$name.err" >&2; fail "$* --json -o $f exited $rc"; }
    [[ -s $f ]] || fail "$name: -o $f wrote nothing"
    grep -qF "wrote $f ($(stat -c %s "$f") bytes)" "$T/$name.err" ||
        fail "$name: stderr does not say 'wrote $f (N bytes)': $(cat "$T/$name.err")"
    docs+=("$name")
}
G=$GPUVET
one=(--only gemm.f32.256x256x256.normal.s1 --determinism none) # one case: quick
expect_rc 0 "$G" snapshot --no-hash -o "$T/s.json"
[[ ! -s $GV_OUT ]] || fail "snapshot -o printed to stdout without --json"
doc_cmd snapshot "$G" snapshot --no-hash
doc_cmd diff "$G" diff "$T/s.json" "$T/s.json"
expect_rc 0 "$G" diff "$T/s.json" -o "$T/d2.json" "$T/s.json"
[[ -s $T/d2.json ]] && ! grep -q '"schema"' "$GV_OUT" ||
    fail "diff -o between operands: no file, or stdout is not the text"
expect_rc 0 "$G" diff -- "$T/s.json" "$T/s.json"
doc_cmd doctor "$G" doctor --snapshot "$T/s.json"
doc_cmd verify "$G" verify --baseline "$T/s.json" --snapshot "$T/s.json"
expect_rc 0 "$G" check --device cpu "${one[@]}" -o "$T/a.json"
expect_rc 0,1 "$G" check "${one[@]}" -o "$T/b.json" --device cpu:emulate=tf32
doc_cmd check "$G" check --device cpu "${one[@]}"
doc_cmd compare "$G" compare "$T/a.json" "$T/b.json"
expect_rc 1 "$G" compare "$T/a.json" -o "$T/c2.json" "$T/b.json" --all
[[ -s $T/c2.json ]] && grep -q . "$GV_OUT" || fail "compare -o: no file or no text"
doc_cmd probe "$G" probe --device cpu --dtype sum.f32
doc_cmd ab "$G" ab --a system --b device=cpu:emulate=tf32 --device cpu \
    --only gemm.f32.256x256x256.normal.s1
expect_rc 0 "$G" history import "$T/a.json"
doc_cmd history "$G" history list
doc_cmd matrix "$G" matrix
printf '__global__ void k(int *x) { if (threadIdx.x < 32) __syncwarp(); }\n' >"$T/k.cu"
doc_cmd port "$G" port scan "$T/k.cu" --target gfx942

/usr/bin/python3 - "$T" "${docs[@]}" <<'EOF' || fail "stdout is not the document -o wrote (above)"
import json, sys
bad = []
for name in sys.argv[2:]:
    a = json.load(open("%s/%s.json" % (sys.argv[1], name)))
    try:
        b = json.load(open("%s/%s.out" % (sys.argv[1], name)))
    except ValueError:
        b = None
    if not (isinstance(a, dict) and "schema" in a and a == b):
        bad.append(name)
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
[[ ${#docs[@]} -ge 11 ]] || fail "only ${#docs[@]} documents checked"

# ---- the interpreter: probe finds the one with torch; its advice is an option it takes ----
has_torch='import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)'
/usr/bin/python3 -c "$has_torch" ||
    fail "/usr/bin/python3 cannot import torch: make test installs Debian's python3-torch"
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' >"$T/bin/python3" # no site-packages: no torch
chmod +x "$T/bin/python3"
! PATH=$T/bin:$PATH python3 -c "$has_torch" || fail "the PATH python3 has torch"
# the snapshot finds /usr/bin/python3 and its torch whatever PATH says
rc=0
PATH=$T/bin:$PATH "$G" probe --device torch:cpu --route torch.matmul --dtype f64 \
    >"$T/pt.out" 2>"$T/pt.err" || rc=$?
[[ $rc == 0 ]] || fail "probe --device torch:cpu with a PATH python3 without torch exited $rc: $(cat "$T/pt.err")"
grep -q 'torch.matmul' "$T/pt.out" || fail "probe torch:cpu printed no torch.matmul route"
grep -q "using /usr/bin/python3" "$T/pt.err" ||
    fail "probe torch:cpu did not say it chose /usr/bin/python3: $(cat "$T/pt.err")"
# the advice is one probe takes: --python PY runs that interpreter
rc=0
PATH=$T/bin:$PATH "$G" probe --device torch:cpu --route torch.matmul --dtype f64 \
    --python "$T/bin/python3" >"$T/px.out" 2>"$T/px.err" || rc=$?
[[ $rc == 3 ]] || fail "probe --python (no torch) exited $rc, not 3: $(cat "$T/px.err")"
grep -q -- '--python' "$T/px.err" || fail "probe --python without torch does not advise --python"
expect_rc 2 "$G" probe --python /usr/bin/python3 --device cpu
grep -q -- '--device torch' "$GV_ERR" || fail "probe --python on the CPU: $(cat "$GV_ERR")"
echo "grammar: $(ls "$T/help" | wc -l) help texts, shared options alike; documents by -o and --json"
