#!/usr/bin/env bash
# Every reference a user can read resolves inside this repository: the sources (src/, python/),
# the documents (docs/, README.md, the man page) and what the binary prints (doctor's rule list,
# --explain, the references of a doctor report) cite facts as `docs/facts/NAME.md §N` or
# `docs/seeds/seed-NNN.txt §N.M`: the file must exist and each § a heading of it (a numbered
# line of a seed); "origin N" (doctor's rule origins) must be item N of docs/doctor.md's
# "Origins". A bare `§N` in src/kb or docs/doctor.md is a section of docs/facts/rocm-facts.md
# (src/kb/rules.c's reference() prefixes it so). A fact document named the old way (bare
# `rocm-facts §3`, `numerics-methods.md`, a path outside the tree such as /work/shared/docs),
# "issue N rule M" or "seed NNN" is an unresolved reference. The documents under docs/facts and
# docs/seeds are the sources themselves and are not scanned.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T
cd "$GV_SRC"
export XDG_CACHE_HOME=$T/cache
files=$(find src python docs README.md -type f \( -name '*.[ch]' -o -name '*.py' -o -name '*.md' -o -name '*.1' \) \
             -not -path 'docs/facts/*' -not -path 'docs/seeds/*' | sort)
[[ -n $files ]] || fail "no sources found under $GV_SRC"
# what the binary itself prints
"$GPUVET" doctor --list-rules >"$T/out.list-rules" || fail "doctor --list-rules"
"$GPUVET" doctor --explain 'hipErrorNoBinaryForGpu' >"$T/out.explain" || fail "doctor --explain"
rc=0
"$GPUVET" doctor --json >"$T/doctor.json" || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "doctor --json exited $rc"
python3 -c 'import json,sys
for f in json.load(open(sys.argv[1]))["findings"]: print(f["reference"])' "$T/doctor.json" >"$T/out.doctor-references"
# shellcheck disable=SC2086
python3 - "$GV_SRC" $files "$T"/out.* <<'PY'
import os, re, sys
root, paths = sys.argv[1], sys.argv[2:]
FACTS = r"rocm-facts|numerics-methods|anchor-tools|bench-anchors|fleet-images-anchors|torch-bisect-anchors|style-anchors|DESIGN"
UNRESOLVED = [
    (re.compile(r"(?<![\w/-])(?:%s)(?:\.md)?(?![\w-])" % FACTS), "a fact document outside docs/facts"),
    (re.compile(r"/work/|shared/docs/"), "a path outside the repository"),
    (re.compile(r"\b[Ii]ssue (?:\d+ )?rule \d+"), "an issue's rule (cite the document that holds it)"),
    (re.compile(r"(?<![\w/-])[Ss]eed \d{3}\b"), "a seed outside docs/seeds"),
]
PATH = re.compile(r"docs/(?:facts|seeds)/[\w.-]+\w|\borigin (?=\d)")
SEC = re.compile(r"§\s?(\d+[a-z]?(?:\.\d+)*)")
ORIGIN = re.compile(r"\d+")
cache = {}


def lines_of(rel):
    if rel not in cache:
        p = os.path.join(root, rel)
        cache[rel] = open(p, encoding="utf-8").read().splitlines() if os.path.isfile(p) else None
    return cache[rel]


def has_section(rel, sec):
    if rel.endswith(".md"):
        heads = [l.lstrip("#").strip() for l in lines_of(rel) if l.startswith("#")]
        return any(re.match(re.escape(sec) + r"(\.?\s|\.?$)", h) for h in heads)
    return any(re.match(re.escape(sec) + r"(\.?\s|\.?(?=[^\d.]))", l.strip()) for l in lines_of(rel))


def has_origin(n):
    md = "\n".join(lines_of("docs/doctor.md"))
    part = md.split("\n## Origins\n", 1)
    return len(part) == 2 and re.search(r"^%s\. " % n, part[1].split("\n## ", 1)[0], re.M) is not None


problems, resolved = [], 0
for path in paths:
    rel = "output of gpuvet " + os.path.basename(path)[4:] if os.path.isabs(path) else path
    default = "docs/facts/rocm-facts.md" if (rel.startswith("src/kb/") or rel == "docs/doctor.md"
                                               or "doctor" in rel or "explain" in rel) else None
    for no, line in enumerate(open(path, encoding="utf-8", errors="replace").read().splitlines(), 1):
        where = "%s:%d" % (rel, no)
        for rx, what in UNRESOLVED:
            for m in rx.finditer(line):
                problems.append("%s: %r is %s" % (where, m.group(0), what))
        # a reference: a path, then the § that follow it up to the next path, ';' or '|'
        for piece in re.split(r"[;|]", line):
            target = default
            pos = 0
            marks = sorted([(m.start(), "path", m) for m in PATH.finditer(piece)] +
                           [(m.start(), "sec", m) for m in SEC.finditer(piece)], key=lambda x: x[0])
            for _, kind, m in marks:
                if kind == "path":
                    target = m.group(0)
                    if target.startswith("origin"):
                        n = ORIGIN.match(piece, m.end()).group(0)
                        resolved += 1
                        if not has_origin(n):
                            problems.append("%s: origin %s is no item of docs/doctor.md's Origins" % (where, n))
                        target = default
                        continue
                    resolved += 1
                    if lines_of(target) is None:
                        problems.append("%s: %s does not exist" % (where, target))
                        target = None
                    continue
                if target is None or lines_of(target) is None:
                    continue
                resolved += 1
                if not has_section(target, m.group(1)):
                    problems.append("%s: %s has no section %s" % (where, target, m.group(1)))
for p in problems:
    print("FAIL:", p, file=sys.stderr)
if resolved < 150:
    print("FAIL: only %d references found: the scan is broken" % resolved, file=sys.stderr)
    sys.exit(1)
if problems:
    sys.exit(1)
print("%d references in %d files and outputs, all resolve" % (resolved, len(paths)))
PY
