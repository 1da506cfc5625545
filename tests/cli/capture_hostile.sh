#!/usr/bin/env bash
# A capture is a document: nothing in it may name code to run (issue 31). Hostile captures
# made from a real one (a tiny model under the host's PyTorch, /usr/bin/python3), edited
# through the documented .gvcap layout, then bisected here:
#   1. the op chain __setattr__("pwn", {"$dtype": "os"}) then pwn.system("touch MARKER"),
#      and names that pass for operators only by their look (aten.save.default, a TorchScript
#      op; aten.from_file.default, which opens a file; os.system.default, an unknown namespace;
#      a name with a control byte): no marker, each op "not an operator: not replayed" (or
#      not replayed for what it is) in the JSON and the text, exit 0 (nothing is flagged), over
#      op-by-op and module-walk bisects; no raw control byte of a name or a module in the text;
#   2. {"$dtype"/"$layout"/"$memory_format": "os" | "load" | "__class__"} in a real op's
#      arguments: never decoded, "unknown dtype 'os': not replayed";
#   3. the model spec pointed at a .env-like file (TOKEN=secret123, a NameError if run) and a
#      model file edited after the capture: the model is not run ("differs from the
#      capture"), the ops are replayed, and secret123 is nowhere in stdout, stderr, the
#      bisect JSON or its `gpuvet report` page;
#   4. the unedited capture bisects as before: every op identical, the model run here.
#   5. a capture naming a file with the recorded digest outside the current directory and
#      the capture's: not run (so a capture cannot pick an installed file with side effects
#      whose bytes it knows), unless the user names it with --model.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
cd "$T"
export XDG_CACHE_HOME=$T/cache

cat >m.py <<'PY'
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 8)
        self.fc2 = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))).to(torch.float64)


def make():
    return Model(), torch.randn(3, 8)
PY
"$GPUVET" torch capture --model "$T/m.py:make" --python "$HOST_PY" --device cpu -o a.gvcap \
    >cap.txt 2>&1 || fail "capture: $(cat cap.txt)"

# edit IN OUT SCRIPT: OUT is IN with its index changed by the Python SCRIPT (given idx, the
# index document; the tensors' bytes and offsets stay as they are)
edit() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
off, n = struct.unpack("<QQ", b[-24:-8])
idx = json.loads(b[off:off + n])
exec(sys.argv[3], {"idx": idx})
text = json.dumps(idx).encode()
open(sys.argv[2], "wb").write(b[:off] + text + struct.pack("<QQ", off, len(text)) + b"GVCAPEND")
PY
}

# bisect CAPTURE NAME ARGS...: NAME.json, NAME.txt (stdout), NAME.err; exit status in $rc
bisect() {
    local c=$1 name=$2
    shift 2
    rc=0
    "$GPUVET" torch bisect "$c" --python "$HOST_PY" --device cpu -o "$name.json" "$@" \
        >"$name.txt" 2>"$name.err" || rc=$?
}

# 1. an op chain that would run a shell command, and names that only look like operators
edit a.gvcap chain.gvcap '
ops = idx["ops"]
def add(name, args, module="evil\u001b[31m"):
    ops.append({"i": len(ops), "name": name, "module": module, "args": args, "kwargs": {},
                "outputs": None, "tuple": False, "devices": [], "seconds": 0.0})
add("__setattr__", ["pwn", {"$dtype": "os"}])
add("pwn.system", ["touch '"$T"'/MARKER"])
add("aten.__class__.default", [])
add("os.system.default", ["touch '"$T"'/MARKER2"])
add("aten.save.default", [{"$t": 0}, "'"$T"'/MARKER3"])
add("aten.from_file.default", ["'"$T"'/MARKER4", True, 4])
add("aten.relu.default\u001b[2J", [{"$t": 0}])
'
for strategy in ops modules; do
    bisect chain.gvcap "chain-$strategy" --strategy "$strategy"
    [[ $rc == 0 ]] || fail "bisect ($strategy) of the hostile chain exited $rc: $(cat "chain-$strategy.err")"
    for m in MARKER MARKER2 MARKER3 MARKER4; do
        [[ ! -e $T/$m ]] || fail "bisect ($strategy) of the hostile chain created $m"
    done
    python3 - "chain-$strategy.json" <<'PY' || fail "the hostile ops ($strategy): $(cat "chain-$strategy.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in d["ops"]}
for name in ("__setattr__", "pwn.system", "aten.__class__.default",
             "aten.relu.default\x1b[2J", "aten.save.default"):
    o = ops[name]
    assert o["verdict"] == "not_replayed", o
    assert o["why"].startswith("not an operator: not replayed"), o
# a name of the right form that is no operator here: never called, named as missing
assert ops["os.system.default"]["verdict"] == "not_replayed", ops["os.system.default"]
assert "has no operator os.system.default" in ops["os.system.default"]["why"], ops["os.system.default"]
# an operator that opens the file it is given
assert ops["aten.from_file.default"]["verdict"] == "not_replayed", ops["aten.from_file.default"]
assert "takes a file name" in ops["aten.from_file.default"]["why"], ops["aten.from_file.default"]
# the control byte is escaped where gpuvet writes the name in a message
assert "\\x1b[2J" in ops["aten.relu.default\x1b[2J"]["why"], ops["aten.relu.default\x1b[2J"]
s = d["summary"]
assert s["identical"] + s["cleared_with_module"] == len(d["ops"]) - 7 and s["not_replayed"] == 7, s
assert not d["culprits"], d["culprits"]
PY
    n=$(grep -c "not an operator: not replayed" "chain-$strategy.txt" || true)
    [[ $n == 5 ]] || fail "the text ($strategy) names $n ops 'not an operator: not replayed', not 5: $(cat "chain-$strategy.txt")"
    ! grep -q $'\x1b' "chain-$strategy.txt" || fail "the text ($strategy) prints a raw escape byte"
done

# 2. dtypes, layouts and memory formats that name other things of torch
edit a.gvcap enums.gvcap '
ops = idx["ops"]
to = [o for o in ops if o["name"] == "aten._to_copy.default"]
assert to and to[0]["kwargs"].get("dtype") == {"$dtype": "float64"}, [o["name"] for o in ops]
import copy
for key, kind, value in (("dtype", "$dtype", "os"), ("dtype", "$dtype", "load"),
                         ("dtype", "$dtype", "__class__"), ("layout", "$layout", "os"),
                         ("memory_format", "$memory_format", "__class__")):
    op = copy.deepcopy(to[0])
    op["i"] = len(ops)
    op["kwargs"][key] = {kind: value}
    ops.append(op)
'
bisect enums.gvcap enums --strategy ops
[[ $rc == 0 ]] || fail "bisect of the capture with hostile dtypes exited $rc: $(cat enums.err)"
python3 - enums.json <<'PY' || fail "the hostile dtypes: $(cat enums.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
to = [o for o in d["ops"] if o["name"] == "aten._to_copy.default"]
assert len(to) == 6, to
assert to[0]["verdict"] == "identical", to[0]
whys = [o.get("why") for o in to[1:]]
assert all(o["verdict"] == "not_replayed" for o in to[1:]), to[1:]
assert whys == ["unknown dtype 'os': not replayed", "unknown dtype 'load': not replayed",
                "unknown dtype '__class__': not replayed", "unknown layout 'os': not replayed",
                "unknown memory_format '__class__': not replayed"], whys
PY

# 3. a model spec that names another file, and a model file changed since the capture
printf 'TOKEN=secret123\n' >.env
edit a.gvcap env.gvcap 'idx["header"]["model"]["spec"] = "'"$T"'/.env:make"'
cp m.py m-orig.py
bisect env.gvcap env --strategy ops
[[ $rc == 0 ]] || fail "bisect of the capture naming .env exited $rc: $(cat env.err)"
grep -q "differs from the capture" env.txt || fail "the text does not say the model file differs: $(cat env.txt)"
"$GPUVET" report env.json -o env.html 2>env-report.err || fail "report of env.json: $(cat env-report.err)"
for f in env.txt env.err env.json env.html; do
    ! grep -q secret123 "$f" || fail "secret123 leaked into $f"
done
python3 - env.json <<'PY' || fail "the .env bisect: $(cat env.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
note = d.get("model_run_note", "")
assert "differs from the capture" in note and "the model was not run; ops replayed only" in note, note
assert "call_changes" not in d and "model_run" not in d, sorted(d)
assert d["summary"]["identical"] == len(d["ops"]) > 3, d["summary"]
PY
printf '\nraise NameError("secret123")\n' >>m.py
bisect a.gvcap edited --strategy ops
cp m-orig.py m.py
[[ $rc == 0 ]] || fail "bisect with an edited model file exited $rc: $(cat edited.err)"
for f in edited.txt edited.err edited.json; do
    ! grep -q secret123 "$f" || fail "secret123 from the edited model leaked into $f"
done
grep -q "differs from the capture" edited.txt || fail "the text does not say the edited model differs: $(cat edited.txt)"

# 4. the capture as it was made: bisected as before, the model run here
bisect a.gvcap plain
[[ $rc == 0 ]] || fail "bisect of the unedited capture exited $rc: $(cat plain.err)"
python3 - plain.json <<'PY' || fail "the unedited bisect: $(cat plain.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["identical"] == len(d["ops"]) > 3, d["summary"]
assert "model_run_note" not in d, d["model_run_note"]
assert d["outputs_status"] == "identical" and d["call_changes"] == [], d
PY
# 5. a capture naming a file elsewhere on the machine whose bytes it knows (as it could
#    name an installed setup.py): its digest matches, but it lies outside the current
#    directory and the capture's, so it is not run unless the user names it with --model
O=$GV_TEST_TMP/capture_hostile_elsewhere
rm -rf "$O" && mkdir -p "$O"
sed "1i open('$O/ran', 'w').close()" m.py >"$O/side.py"
sha=$(sha256sum "$O/side.py" | cut -c1-64)
edit a.gvcap far.gvcap 'idx["header"]["model"]["spec"] = "'"$O"'/side.py:make"; idx["header"]["model"]["file_sha256"] = "'"$sha"'"'
bisect far.gvcap far --strategy ops
[[ $rc == 0 ]] || fail "bisect of the capture naming $O/side.py exited $rc: $(cat far.err)"
[[ ! -e $O/ran ]] || fail "bisect ran a model file outside the current directory and the capture's"
grep -q "lies outside the current directory and the capture's" far.txt ||
    fail "the text does not say why the model was not run: $(cat far.txt)"
bisect far.gvcap far-named --strategy ops --model "$O/side.py:make"
[[ $rc == 0 && -e $O/ran ]] || fail "bisect --model $O/side.py (digest matching) did not run it: $(cat far-named.err)"
rm -rf "$O"

echo "capture_hostile: all parts passed"
