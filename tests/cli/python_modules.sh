#!/usr/bin/env bash
# The worker's Python files (python/*.py) are modules whose dependencies are all visible:
# every name a module uses is defined or imported in it (or a builtin), every gpuvet_*
# module it imports is one of those files (the bootstrap imports only them, from memory,
# src/dev/torch/torch_proc.c), and each imports on its own without torch (torch is imported
# when a request opens it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
python3 - "$GV_SRC/python" <<'PY' || fail "the worker's modules"
import ast, builtins, os, subprocess, symtable, sys
src = sys.argv[1]
mods = sorted(f[:-3] for f in os.listdir(src) if f.endswith(".py"))
bad = []
for m in mods:
    text = open(os.path.join(src, m + ".py")).read()
    top = symtable.symtable(text, m + ".py", "exec")
    defined = set(s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported())

    def walk(t):
        for s in t.get_symbols():
            n = s.get_name()
            if s.is_referenced() and s.is_global() and n not in defined and \
                    not hasattr(builtins, n):
                bad.append("%s.py: %s uses %s, which the module does not define or import"
                           % (m, t.get_name(), n))
        for c in t.get_children():
            walk(c)
    walk(top)
    for node in ast.walk(ast.parse(text)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for n in names:
            if n.startswith("gpuvet_") and n not in mods:
                bad.append("%s.py imports %s, which is not a file of python/" % (m, n))
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                        "import %s; assert 'torch' not in sys.modules, 'imports torch'" % m,
                        src], capture_output=True, text=True)
    if r.returncode:
        bad.append("%s.py does not import on its own: %s" % (m, r.stderr.strip()[-300:]))
if bad:
    sys.exit("\n".join(bad))
print("%d modules, each with its dependencies visible: %s" % (len(mods), " ".join(mods)))
PY
