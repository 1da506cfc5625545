#!/usr/bin/env bash
# gpuvet port scan over the hand-written corpus (tests/port/corpus): the
# findings must be exactly those in corpus/EXPECTED (written by hand, not by the
# scanner): a missing one is a recall failure, an extra one a precision
# failure; precision and recall are printed. Then: a wave32 target gives no
# wavefront findings, the default targets come from the GPUs of a --root, the
# JSON shape, the JUnit report parses, and bad input
# (a directory link loop, an unreadable file, a binary file, a huge file, a
# missing path, an unknown target) gives clear messages.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
corpus=$GV_SRC/tests/port/corpus
gv_tmpdir T

# --- the corpus against EXPECTED, default targets (no AMD GPU here: gfx942 + gfx1100)
expect_rc 1 "$GPUVET" port scan --target gfx942,gfx1100 --json "$corpus"
cp "$GV_OUT" "$T/scan.json"
python3 - "$T/scan.json" "$corpus/EXPECTED" "$corpus" <<'EOF'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
prefix = sys.argv[3].rstrip("/") + "/"
got = collections.Counter()
for f in doc["findings"]:
    assert f["file"].startswith(prefix), f["file"]
    got["%s:%d:%s" % (f["file"][len(prefix):], f["line"], f["rule"])] += 1
want = collections.Counter(l.strip() for l in open(sys.argv[2])
                           if l.strip() and not l.startswith("#"))
tp = sum((got & want).values())
missing = sorted((want - got).elements())
extra = sorted((got - want).elements())
print("corpus: %d expected, %d found, precision %.3f, recall %.3f"
      % (sum(want.values()), sum(got.values()),
         tp / max(1, sum(got.values())), tp / max(1, sum(want.values()))))
for m in missing:
    print("FAIL: missing (recall):", m, file=sys.stderr)
for e in extra:
    print("FAIL: extra (precision):", e, file=sys.stderr)
sys.exit(1 if missing or extra else 0)
EOF

# --- the JSON shape
python3 - "$T/scan.json" <<'EOF' || fail "JSON shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuvet.port" and d["schema_version"] == 1 and d["command"] == "scan", d
assert d["targets"] == ["gfx942", "gfx1100"], d["targets"]
keys = {"file", "line", "column", "rule", "severity", "message", "why", "source", "fix",
        "targets", "snippet"}
for f in d["findings"]:
    assert set(f) == keys, set(f) ^ keys
    assert f["severity"] in ("error", "warning", "note"), f
    assert f["line"] >= 1 and f["column"] >= 1, f
    assert f["why"] and f["source"] and f["fix"] and f["message"], f
    assert f["targets"] and all(t.startswith("gfx") for t in f["targets"]), f
    if f["rule"].startswith("wave"):
        assert f["targets"] == ["gfx942"], f
s = d["stats"]
assert s["files"] == 15 and s["findings"] == len(d["findings"]) and s["lines"] > 200, s
assert "paths" not in s, "the file list is for --junit only"
EOF
# the text form: the verdict first, then the findings grouped by file
expect_rc 1 "$GPUVET" port scan --target gfx942,gfx1100 "$corpus"
head -1 "$GV_OUT" | grep -Eq '^[0-9]+ findings in 11 files \([0-9]+ errors, ' ||
    fail "text verdict line: $(head -1 "$GV_OUT")"
grep -q "^$corpus/ptx.cu$" "$GV_OUT" || fail "no file heading for ptx.cu"

# --- wave32 only: no wavefront finding, the rest stays
expect_rc 1 "$GPUVET" port scan --target gfx1100 --json "$corpus"
python3 - "$GV_OUT" <<'EOF' || fail "--target gfx1100"
import json, sys
rules = [f["rule"] for f in json.load(open(sys.argv[1]))["findings"]]
wave = [r for r in rules if r.startswith("wave") or r == "shfl-width-32"]
assert not wave, wave
assert "sync-mask-32bit" in rules and "inline-ptx" in rules, rules
EOF
# no --target: the GPUs of the root (a KFD node of an RDNA3 card), here wave32 only
R=$T/root
pci=$R/sys/bus/pci/devices/0000:03:00.0
mkdir -p "$pci" "$R/sys/class/kfd/kfd/topology/nodes/1"
echo 0x1002 >"$pci/vendor"
echo 0x030000 >"$pci/class"
printf 'gfx_target_version 110000\nlocation_id 768\ndomain 0\n' \
    >"$R/sys/class/kfd/kfd/topology/nodes/1/properties"
expect_rc 1 "$GPUVET" port scan --root "$R" --json "$corpus/ballot_32.cu"
expect_json "$GV_OUT" 'd["targets"], d["targets_from"]' "['gfx1100'] the AMD GPUs present"
expect_json "$GV_OUT" 'sorted({f["rule"] for f in d["findings"]})' "['sync-mask-32bit']"
# the same card as gfx942 (CDNA3): the wavefront findings appear
sed -i 's/110000/90402/' "$R/sys/class/kfd/kfd/topology/nodes/1/properties"
expect_rc 1 "$GPUVET" port scan --root "$R" --json "$corpus/ballot_32.cu"
expect_json "$GV_OUT" 'd["targets"]' "['gfx942']"
expect_json "$GV_OUT" '"wave-ballot-32bit" in {f["rule"] for f in d["findings"]}' True

# correct files alone: nothing at all, exit 0
expect_rc 0 "$GPUVET" port scan "$corpus/warp_reduce_ok.cu" "$corpus/warp_scan_ok.cu" \
    "$corpus/ballot_ok.cu" "$corpus/py_ok.py"
grep -q "^no findings" "$GV_OUT" || fail "correct files: $(head -1 "$GV_OUT")"

# --- JUnit: one testcase per file, a failure per file with error findings
expect_rc 1 "$GPUVET" port scan --target gfx942 --junit "$T/port.xml" "$corpus"
python3 - "$T/port.xml" <<'EOF' || fail "JUnit"
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
cases = {c.get("name").rsplit("/", 1)[1]: c for c in cases}
assert len(cases) == 15, sorted(cases)
failed = sorted(n for n, c in cases.items() if c.find("failure") is not None)
assert "warp_reduce_32.cu" in failed and "torch_device.py" in failed, failed
assert "warp_reduce_ok.cu" not in failed and "smi.py" not in failed, failed  # warnings only
EOF

# --- bad input
mkdir -p "$T/bad/loop"
ln -s .. "$T/bad/loop/up"
printf '__global__ void k() {}\n' >"$T/bad/fine.cu"
printf 'int a;\0\1\2 __shfl_sync(0xffffffff, v, 0);\n' >"$T/bad/blob.cu"
truncate -s 9M "$T/bad/huge.cu"
expect_rc 0 "$GPUVET" port scan "$T/bad"
grep -q "skipped $T/bad/loop/up: a symbolic link: not followed" "$GV_ERR" || fail "link loop: $(cat "$GV_ERR")"
grep -q "skipped $T/bad/blob.cu: binary" "$GV_ERR" || fail "binary: $(cat "$GV_ERR")"
grep -q "skipped $T/bad/huge.cu: larger than 8 MiB" "$GV_ERR" || fail "huge: $(cat "$GV_ERR")"
grep -q " 1 files, 1 lines scanned" "$GV_OUT" || fail "bad tree: $(head -1 "$GV_OUT")"

# an unreadable file: as a user that may not read it (root reads everything), in a
# tree under /tmp with its own copy of the binary, so that no parent directory of
# the build keeps that user out
U=$(mktemp -d /tmp/gv-port-scan.XXXXXX)
at_exit "rm -rf $(printf %q "$U")"
mkdir "$U/src"
printf '__global__ void k() {}\n' >"$U/src/fine.cu"
printf '__global__ void k() {}\n' >"$U/src/secret.cu"
cp "$GPUVET" "$U/gpuvet"
chmod 755 "$U" "$U/src" "$U/gpuvet" && chmod 644 "$U/src/fine.cu" && chmod 000 "$U/src/secret.cu"
as_user=()
if [[ $(id -u) == 0 ]]; then
    command -v setpriv >/dev/null || fail "setpriv is needed to drop root (util-linux)"
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
expect_rc 0 "${as_user[@]}" "$U/gpuvet" port scan "$U/src"
grep -q "skipped $U/src/secret.cu: cannot open: Permission denied" "$GV_ERR" ||
    fail "unreadable: $(cat "$GV_ERR")"
grep -q " 1 files, 1 lines scanned" "$GV_OUT" || fail "unreadable tree: $(head -1 "$GV_OUT")"

expect_rc 3 "$GPUVET" port scan "$T/absent"
grep -q "$T/absent: No such file or directory" "$GV_ERR" || fail "missing path: $(cat "$GV_ERR")"
expect_rc 3 "$GPUVET" port scan --target gfx9999x "$corpus"
grep -q "unknown target 'gfx9999x'" "$GV_ERR" || fail "bad target: $(cat "$GV_ERR")"
expect_rc 2 "$GPUVET" port scan
expect_rc 2 "$GPUVET" port frobnicate x
echo "port_scan: ok"
