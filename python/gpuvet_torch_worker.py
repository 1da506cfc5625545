# gpuvet's PyTorch worker. It runs inside the user's own interpreter and
# computes numerics cases with the PyTorch calls a user would write; gpuvet
# (src/dev/torch/torch.c) generates the inputs and judges the outputs in C.
#
# It ships inside the gpuvet binary and arrives over the socket, with the
# modules it imports (gpuvet_capture*, gpuvet_bench, gpuvet_errors), which the
# bootstrap (src/dev/torch/torch_proc.c) imports by name from memory, so nothing is
# written into the user's environment. Plain Python 3.7+, no dependency beyond torch, and it
# works with every torch from 1.13 on: a function an older torch lacks makes
# its cases "unsupported" with the reason.
#
# Protocol (docs/torch.md): every message is a frame: u32 little-endian
# length of a JSON header, the header, then header["nbytes"] payload bytes.
#   gpuvet -> worker: {"op": "open", "device": "cuda:0"}
#                     {"op": "supports", "case": CASE}
#                     {"op": "run", "case": CASE, "inputs": [{"dtype", "count"}],
#                      "out": {"dtype", "count"}, "nbytes": N} + the inputs' bytes
#                     {"op": "describe"}
#                     {"op": "referee_open", "threads": N, "n": N} (bisect's referee)
#   worker -> gpuvet: {"ok": true, ...} [+ payload] or
#                     {"ok": false, "status": "unsupported" | "error" | "device" |
#                      "oom" | kind of open failure, "error": "why"}
import json
import os
import re
import socket
import struct
import sys
import time
import warnings

import gpuvet_bench
import gpuvet_capture
import gpuvet_capture_native
import gpuvet_capture_replay
from gpuvet_errors import Unsupported, err_text, where

PROTOCOL = 1

# ---------------------------------------------------------------- framing


class Channel(object):
    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd)

    def _read_into(self, buf):
        view = memoryview(buf)
        got = 0
        while got < len(buf):
            n = self.sock.recv_into(view[got:])
            if n == 0:
                raise EOFError("gpuvet closed the connection")
            got += n

    def recv(self):
        head = bytearray(4)
        self._read_into(head)
        (n,) = struct.unpack("<I", bytes(head))
        text = bytearray(n)
        self._read_into(text)
        hdr = json.loads(bytes(text).decode("utf-8"))
        payload = bytearray(int(hdr.get("nbytes") or 0))
        if payload:
            self._read_into(payload)
        return hdr, payload

    def send(self, hdr, payload=b""):
        hdr = dict(hdr)
        hdr["nbytes"] = len(payload)
        text = json.dumps(hdr, separators=(",", ":"), default=str).encode("utf-8")
        self.sock.sendall(struct.pack("<I", len(text)) + text)
        if payload:
            self.sock.sendall(payload)


# ---------------------------------------------------------------- the open step


def read_maps():
    """Every shared object this process mapped, in first-mapped order."""
    seen, out = set(), []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                base = os.path.basename(path)
                if not path.startswith("/") or ".so" not in base or path in seen:
                    continue
                seen.add(path)
                out.append(path)
    except OSError:
        pass
    return out


def node_access(path):
    if not os.path.exists(path):
        return "missing"
    return "ok" if os.access(path, os.R_OK | os.W_OK) else "no permission"


def elf_needed(path):
    """DT_NEEDED names of a 64-bit little-endian ELF file ([] when unreadable)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            return []
        phoff, = struct.unpack_from("<Q", data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
        loads, dyn = [], None
        for i in range(phnum):
            p_type, _, p_off, p_vaddr, _, p_filesz = struct.unpack_from(
                "<IIQQQQ", data, phoff + i * phentsize)
            if p_type == 1:
                loads.append((p_vaddr, p_off, p_filesz))
            elif p_type == 2:
                dyn = (p_off, p_filesz)
        if not dyn:
            return []
        entries, strtab = [], None
        for off in range(dyn[0], dyn[0] + dyn[1], 16):
            tag, val = struct.unpack_from("<qQ", data, off)
            if tag == 0:
                break
            if tag == 5:
                strtab = val
            elif tag == 1:
                entries.append(val)
        base = next((o + strtab - v for v, o, n in loads if v <= strtab < v + n), None)
        if base is None:
            return []
        return [data[base + e:data.index(b"\0", base + e)].decode("utf-8", "replace")
                for e in entries]
    except (OSError, ValueError, struct.error):
        return []


def shadowing_libraries(path):
    """Libraries `path` needs that LD_LIBRARY_PATH supplies: the usual culprits."""
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    found = []
    for name in elf_needed(path):
        for d in dirs:
            cand = os.path.join(d, name)
            if os.path.exists(cand):
                found.append(cand)
                break
    return found


def import_failure(e):
    """Why `import torch` failed: a kind and a message naming the reason."""
    exe = sys.executable or "python"
    who = "%s (Python %d.%d)" % (exe, sys.version_info[0], sys.version_info[1])
    text = str(e).strip()
    if isinstance(e, ImportError) and getattr(e, "name", None) == "torch":
        return ("no-torch", "%s has no torch: %s; install PyTorch into this environment or "
                "choose another interpreter with --python (searched: %s)"
                % (who, text, ", ".join(p for p in sys.path if p)[:600]))
    m = re.search(r"(\S+): undefined symbol: (\S+)", text)
    if m:
        needer = m.group(1).rstrip(":")
        shadow = shadowing_libraries(needer)
        cause = ("the library that should define it comes from LD_LIBRARY_PATH: %s"
                 % ", ".join(shadow)) if shadow else \
            "a mismatched copy of one of the libraries it needs is loaded"
        return ("import-undefined-symbol",
                "%s: import torch failed: %s needs the symbol %s, which no loaded library "
                "defines; %s (see `gpuvet doctor`, rules torch-runtime and rocm-mixed-path)"
                % (who, needer, m.group(2), cause))
    m = re.search(r"(\S+\.so[\w.]*): cannot open shared object file", text)
    if m:
        return ("import-missing-library",
                "%s: import torch failed: the library %s cannot be found (%s); see `gpuvet "
                "doctor`, rule torch-runtime" % (who, m.group(1), text.splitlines()[0]))
    return ("import-error", "%s: import torch raised %s%s" % (who, err_text(e), where(e)))


def gpu_failure(torch, index):
    """Why torch cannot use GPU `index`: a kind and a message."""
    exe = sys.executable or "python"
    ver = torch.__version__
    cuda = torch.version.cuda
    hip = getattr(torch.version, "hip", None)
    loc = os.path.dirname(torch.__file__)
    if cuda is None and hip is None:
        return ("cpu-build", "%s: torch %s (%s) is a CPU-only build: it cannot use a GPU; install "
                "the ROCm or CUDA wheel (see `gpuvet doctor`, rule torch-build)" % (exe, ver, loc))
    kfd, nvctl = node_access("/dev/kfd"), node_access("/dev/nvidiactl")
    detail = ""
    try:
        torch.cuda.init()
    except Exception as e:  # torch's own words: no driver, driver too old, ...
        detail = "; torch says: " + err_text(e)
    if cuda is not None and nvctl == "missing" and kfd != "missing":
        return ("wrong-build", "%s: torch %s is a CUDA %s build, but this machine has an AMD GPU "
                "(/dev/kfd) and no NVIDIA driver; install the ROCm wheel (see `gpuvet doctor`, "
                "rule torch-build)%s" % (exe, ver, cuda, detail))
    if hip is not None and kfd == "missing" and nvctl != "missing":
        return ("wrong-build", "%s: torch %s is a ROCm (HIP %s) build, but this machine has an "
                "NVIDIA GPU and no /dev/kfd; install the CUDA wheel (see `gpuvet doctor`, rule "
                "torch-build)%s" % (exe, ver, hip, detail))
    if hip is not None and kfd == "no permission":
        return ("permission", "%s: torch %s cannot open /dev/kfd (no permission): add the user to "
                "the render and video groups (see `gpuvet doctor`, rule gpu-access)%s"
                % (exe, ver, detail))
    if cuda is not None and nvctl == "no permission":
        return ("permission", "%s: torch %s cannot open /dev/nvidiactl (no permission) (see "
                "`gpuvet doctor`, rule gpu-access)%s" % (exe, ver, detail))
    count = 0
    try:
        count = torch.cuda.device_count()
    except Exception:
        pass
    if count == 0 or not torch.cuda.is_available():
        what = "HIP %s" % hip if hip is not None else "CUDA %s" % cuda
        return ("no-gpu", "%s: torch %s (%s build) sees no GPU: torch.cuda.is_available() is "
                "False (/dev/kfd: %s, /dev/nvidiactl: %s)%s" % (exe, ver, what, kfd, nvctl, detail))
    if index >= count:
        return ("no-device", "%s: torch sees %d GPU(s); there is no cuda:%d" % (exe, count, index))
    return None


# ---------------------------------------------------------------- the worker


UNARY = {
    "exp": lambda t, x: t.exp(x), "log": lambda t, x: t.log(x), "tanh": lambda t, x: t.tanh(x),
    "erf": lambda t, x: t.erf(x), "sigmoid": lambda t, x: t.sigmoid(x),
    "rsqrt": lambda t, x: t.rsqrt(x),
    "gelu": lambda t, x: t.nn.functional.gelu(x), "silu": lambda t, x: t.nn.functional.silu(x),
}

FP8 = ("f8e4m3", "f8e5m2")


def scaled_mm_case(c):
    """An fp8 GEMM with an fp32 output: PyTorch's call for it is torch._scaled_mm."""
    return c["op"] == "gemm" and c["in"] in FP8 and c["out"] == "f32"


SDPA_BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                 "math": "MATH", "cudnn": "CUDNN_ATTENTION"}

# profiler op names -> attention backend
SDPA_OPS = [("flash", "flash"), ("efficient", "efficient"), ("cudnn", "cudnn"),
            ("math", "math")]


class Worker(object):
    def __init__(self, chan):
        self.chan = chan
        self.torch = None
        self.dev = None
        self.is_gpu = False
        self.profile = os.environ.get("GPUVET_TORCH_PROFILE", "1") != "0"
        self.profile_note = ""
        self.import_seconds = 0.0
        self.open_seconds = 0.0

    # -------------------------------------------------------- open / describe

    def open(self, req):
        t0 = time.perf_counter()
        try:
            import torch
        except BaseException as e:  # noqa: B902 - anything import raises is the answer
            kind, msg = import_failure(e)
            return {"ok": False, "status": kind, "error": msg}
        self.import_seconds = time.perf_counter() - t0
        self.torch = torch
        spec = req.get("device") or "cpu"
        if spec == "cpu":
            self.dev = torch.device("cpu")
        else:
            m = re.match(r"^cuda(?::(\d+))?$", spec)
            if not m:
                return {"ok": False, "status": "usage",
                        "error": "torch device '%s': expected cpu or cuda:N" % spec}
            index = int(m.group(1) or 0)
            bad = gpu_failure(torch, index)
            if bad:
                return {"ok": False, "status": bad[0], "error": bad[1]}
            self.dev = torch.device("cuda", index)
            self.is_gpu = True
            try:
                torch.cuda.set_device(index)
                (torch.zeros(1, device=self.dev) + 1).cpu()  # first kernel: does the build run here?
            except Exception as e:
                msg = err_text(e)
                kind = "no-kernel-image" if re.search(r"no kernel image|NoBinaryForGpu|invalid "
                                                      r"device function", msg) else "device"
                hint = (" (the GPU's architecture is not compiled into this torch build; see "
                        "`gpuvet doctor`, rule gfx-not-in-wheel)") if kind == "no-kernel-image" else ""
                return {"ok": False, "status": kind,
                        "error": "%s: torch %s cannot run a kernel on %s: %s%s"
                                 % (sys.executable, torch.__version__, self.dev, msg, hint)}
        self.defaults = self.flags_now()
        self.open_seconds = time.perf_counter() - t0
        return {"ok": True, "describe": self.describe(pool=False)}

    def getflag(self, path):
        """A torch flag by dotted path, or None when this torch has no such flag."""
        obj = self.torch
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
            return obj() if callable(obj) else obj
        except Exception:  # older torch raise AssertionError from __getattr__
            return None

    FLAGS = [
        ("matmul.allow_tf32", "backends.cuda.matmul.allow_tf32"),
        ("matmul.allow_fp16_reduced_precision_reduction",
         "backends.cuda.matmul.allow_fp16_reduced_precision_reduction"),
        ("matmul.allow_bf16_reduced_precision_reduction",
         "backends.cuda.matmul.allow_bf16_reduced_precision_reduction"),
        ("matmul.allow_fp16_accumulation", "backends.cuda.matmul.allow_fp16_accumulation"),
        ("float32_matmul_precision", "get_float32_matmul_precision"),
        ("cudnn.allow_tf32", "backends.cudnn.allow_tf32"),
        ("cudnn.benchmark", "backends.cudnn.benchmark"),
        ("cudnn.deterministic", "backends.cudnn.deterministic"),
        ("deterministic_algorithms", "are_deterministic_algorithms_enabled"),
        ("sdp.flash", "backends.cuda.flash_sdp_enabled"),
        ("sdp.mem_efficient", "backends.cuda.mem_efficient_sdp_enabled"),
        ("sdp.math", "backends.cuda.math_sdp_enabled"),
        ("sdp.cudnn", "backends.cuda.cudnn_sdp_enabled"),
        ("preferred_blas_library", "backends.cuda.preferred_blas_library"),
    ]

    def flags_now(self):
        out = {}
        for name, path in self.FLAGS:
            v = self.getflag(path)
            if v is not None:
                out[name] = v if isinstance(v, (bool, int, float, str)) else str(v)
        return out

    def build_settings(self):
        try:
            text = self.torch.__config__.show()
        except Exception:
            return {}
        out = {}
        m = re.search(r"Build settings: (.*)", text)
        if m:
            for item in m.group(1).split(", "):
                k, _, v = item.partition("=")
                if k in ("BLAS_INFO", "LAPACK_INFO", "USE_CUDA", "USE_ROCM", "USE_CUDNN",
                         "USE_MKLDNN", "USE_OPENMP", "TORCH_VERSION", "CUDA_VERSION",
                         "CUDNN_VERSION", "BUILD_TYPE"):
                    out[k] = v
        m = re.search(r"CPU capability usage: (\S+)", text)
        if m:
            out["CPU_CAPABILITY"] = m.group(1)
        return out

    def describe(self, pool=True):
        torch = self.torch
        t = {"version": torch.__version__, "cuda": torch.version.cuda,
             "hip": getattr(torch.version, "hip", None),
             "git_version": getattr(torch.version, "git_version", None),
             "debug": bool(getattr(torch.version, "debug", False)),
             "path": os.path.dirname(torch.__file__),
             "build": "rocm" if getattr(torch.version, "hip", None) else
                      "cuda" if torch.version.cuda else "cpu",
             "import_seconds": round(self.import_seconds, 4),
             "build_settings": self.build_settings(),
             "flags": self.flags_now(), "threads": torch.get_num_threads()}
        cudnn = self.getflag("backends.cudnn.version")
        if cudnn is not None:
            t["cudnn"] = cudnn
        d = {"backend": "torch", "device": str(self.dev), "torch": t,
             "fp_mode": gpuvet_capture_replay.fp_mode(torch, pool),
             "python": {"executable": sys.executable, "version": sys.version.split()[0],
                        "prefix": sys.prefix},
             "mapped_files": read_maps()}
        if self.profile_note:
            d["profiler"] = self.profile_note
        if self.is_gpu:
            idx = self.dev.index
            p = torch.cuda.get_device_properties(idx)
            d["name"] = p.name
            d["memory_bytes"] = int(p.total_memory)
            d["multiprocessors"] = int(p.multi_processor_count)
            arch = getattr(p, "gcnArchName", None)
            if t["hip"] and arch:
                d["arch"] = arch
            else:
                d["arch"] = "sm_%d%d" % (p.major, p.minor)
                if not t["hip"]:
                    d["compute_capability"] = "%d.%d" % (p.major, p.minor)
            try:
                t["arch_list"] = torch.cuda.get_arch_list()
            except Exception:
                pass
            # the seed's three-line check
            d["validation"] = {"cuda_available": bool(torch.cuda.is_available()),
                               "device_name": torch.cuda.get_device_name(idx),
                               "hip": t["hip"], "cuda": t["cuda"]}
            avail = {}
            for name, path in (("flash", "backends.cuda.is_flash_attention_available"),
                               ("cudnn", "backends.cuda.is_cudnn_attention_available")):
                v = self.getflag(path)
                if v is not None:
                    avail[name] = bool(v)
            if avail:
                d["sdpa_available"] = avail
        else:
            d["name"] = "torch %s on the CPU" % torch.__version__
            d["arch"] = t["build_settings"].get("CPU_CAPABILITY", "cpu")
        return d

    # -------------------------------------------------------- cases

    def dtype(self, name):
        torch = self.torch
        table = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16",
                 "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}
        attr = table.get(name)
        dt = getattr(torch, attr, None) if attr else None
        if dt is None:
            raise Unsupported("torch %s has no torch.%s" % (torch.__version__, attr or name))
        return dt

    def need(self, path, since):
        obj = self.torch
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                raise Unsupported("torch %s has no torch.%s (added in %s)"
                                  % (self.torch.__version__, path, since))
        return obj

    def check_supported(self, c):
        """Static reasons a case cannot run here; raises Unsupported."""
        op, prec, call = c["op"], c.get("prec", ""), c.get("call", "")
        for k in ("in", "out"):
            self.dtype(c[k])
        if scaled_mm_case(c):
            # PyTorch's fp8 GEMM is torch._scaled_mm (fp32 output allowed), not matmul
            self.need("_scaled_mm", "2.1")
        elif op == "gemm" and c["out"] != c["in"] and not (c["in"] == "f32" and c["out"] == "f32"):
            # gpuvet probe asks for fp16/bf16/fp8 inputs with an fp32 output: not a PyTorch call
            raise Unsupported("torch.matmul returns its inputs' dtype (%s), not %s"
                              % (c["in"], c["out"]))
        if op == "gemm" and prec == "f16acc16":
            if not self.is_gpu:
                raise Unsupported("PyTorch offers fp16 accumulation only for cuBLAS/hipBLAS "
                                  "(torch.backends.cuda.matmul.allow_fp16_accumulation); fp16 "
                                  "matmul on the CPU accumulates in fp32")
            if self.getflag("backends.cuda.matmul.allow_fp16_accumulation") is None:
                raise Unsupported("torch %s has no torch.backends.cuda.matmul."
                                  "allow_fp16_accumulation (added in 2.7)" % self.torch.__version__)
        if op == "sdpa":
            self.need("nn.functional.scaled_dot_product_attention", "2.0")
            if call:
                if call not in SDPA_BACKENDS:
                    raise Unsupported("unknown attention backend '%s'" % call)
                if call == "cudnn" and not self.is_gpu:
                    raise Unsupported("the cuDNN attention backend exists only on CUDA")
                if call == "efficient" and not self.is_gpu:
                    raise Unsupported("the memory-efficient attention backend exists only on "
                                      "CUDA/ROCm")
                self.sdpa_selector(call)
        if op == "rmsnorm":
            self.need("nn.functional.rms_norm", "2.4")
        if op == "mlp":
            self.need("autocast", "1.10")
            if c["prec"] == "f16" and not self.is_gpu:
                self.need("amp.GradScaler", "2.3")
        if op == "unary" and c["unary"] not in UNARY:
            raise Unsupported("unknown function %s" % c["unary"])

    def sdpa_selector(self, backend):
        """A context manager that allows only this attention backend."""
        torch = self.torch
        attn = getattr(getattr(torch, "nn", None), "attention", None)
        sel = getattr(attn, "sdpa_kernel", None) if attn else None
        if sel is not None:
            kind = getattr(attn.SDPBackend, SDPA_BACKENDS[backend], None)
            if kind is None:
                raise Unsupported("torch %s has no SDPBackend.%s"
                                  % (torch.__version__, SDPA_BACKENDS[backend]))
            return sel([kind])
        if backend == "cudnn":
            raise Unsupported("torch %s has no cuDNN attention backend (added in 2.5)"
                              % torch.__version__)
        old = getattr(torch.backends.cuda, "sdp_kernel", None)
        if old is None:
            raise Unsupported("torch %s cannot select an attention backend" % torch.__version__)
        return old(enable_flash=backend == "flash", enable_math=backend == "math",
                   enable_mem_efficient=backend == "efficient")

    def tensor(self, spec, data, shape):
        torch = self.torch
        dt = self.dtype(spec["dtype"])
        if not data:
            t = torch.zeros(shape, dtype=dt)
        else:
            t = torch.frombuffer(data, dtype=dt).reshape(shape)
        return t.to(self.dev)

    def shapes(self, c):
        op = c["op"]
        if op == "gemm":
            b = c["batch"] if c["batch"] > 1 else None
            a, bb = [c["m"], c["k"]], [c["k"], c["n"]]
            return ([b] + a, [b] + bb) if b else (a, bb)
        if op == "conv2d":
            return ([c["n"], c["c"], c["h"], c["w"]], [c["k"], c["c"], c["r"], c["s"]])
        if op == "sdpa":
            s = [1, c["bh"], c["seq"], c["d"]]
            return (s, s, s)
        if op == "layernorm":
            return ([c["rows"], c["len"]], [c["len"]], [c["len"]])
        if op == "rmsnorm":
            return ([c["rows"], c["len"]], [c["len"]])
        if op in ("softmax", "sum", "mean"):
            return ([c["rows"], c["len"]],)
        if op == "mlp":
            B, D, H, O = c["m"], c["k"], c["n"], c["d"]
            return ([B, D], [H, D + 1], [O, H + 1], [B, O])
        return ([c["len"]],)

    def set_flag(self, path, value, note):
        """Sets a torch flag for this case; notes it. False when this torch lacks it."""
        if self.getflag(path) is None:
            note.append("%s: not in this torch" % path.split(".")[-1])
            return False
        obj = self.torch
        parts = path.split(".")
        for part in parts[:-1]:
            obj = getattr(obj, part)
        setattr(obj, parts[-1], value)
        note.append("%s=%d" % (parts[-1], int(value)))
        return True

    def restore_flags(self):
        for name, path in self.FLAGS:
            if name not in self.defaults or not path.startswith("backends.") or \
                    name.startswith("sdp.") or name == "preferred_blas_library":
                continue
            obj = self.torch
            parts = path.split(".")
            try:
                for part in parts[:-1]:
                    obj = getattr(obj, part)
                setattr(obj, parts[-1], self.defaults[name])
            except Exception:
                pass

    def note_flag(self, path, note, why):
        """Records a flag left as this process has it (so that environment overrides
        such as TORCH_ALLOW_TF32_CUBLAS_OVERRIDE, or a sitecustomize, show through)."""
        v = self.getflag(path)
        note.append("%s=%s (%s)" % (path.split(".")[-1], "?" if v is None else int(bool(v)), why))

    def gemm_flags(self, prec, note):
        """Flags are set only where PyTorch's default would not compute the case's
        declared precision; where it would, they are left as found and recorded."""
        if prec in ("f32", "f64"):
            self.note_flag("backends.cuda.matmul.allow_tf32", note, "as found")
        elif prec == "tf32":
            self.set_flag("backends.cuda.matmul.allow_tf32", True, note)
        elif prec == "f16acc32":
            self.set_flag("backends.cuda.matmul.allow_fp16_reduced_precision_reduction", False,
                          note)
        elif prec == "bf16acc32":
            self.set_flag("backends.cuda.matmul.allow_bf16_reduced_precision_reduction", False,
                          note)
        elif prec == "f16acc16":
            self.set_flag("backends.cuda.matmul.allow_fp16_accumulation", True, note)
        elif prec in ("f16", "bf16"):  # PyTorch's defaults, as they are
            self.note_flag("backends.cuda.matmul.allow_%s_reduced_precision_reduction"
                           % ("fp16" if prec == "f16" else prec), note, "default")

    def fp8_scale(self):
        """The scale 1.0 on the device for torch._scaled_mm, made once."""
        one = getattr(self, "_fp8_one", None)
        if one is None:
            one = self._fp8_one = self.torch.ones((), device=self.dev,
                                                  dtype=self.torch.float32)
        return one

    def scaled_mm(self, a, b, note):
        """C = A.B of fp8 operands in fp32 through torch._scaled_mm, the call
        PyTorch's fp8 layers make: scales 1.0, B column-major (its layout rule),
        K padded with zeros to a multiple of 16 (exact in any sum); batches one
        call each. b: [K, N] (a view of a transposed weight is taken as it is)."""
        torch = self.torch
        k = a.shape[-1]
        k16 = (k + 15) // 16 * 16
        one = self.fp8_scale()

        def one_mm(a2, b2):
            if k16 != k:
                pa = torch.zeros((a2.shape[0], k16), dtype=a2.dtype, device=a2.device)
                pa[:, :k] = a2
                pb = torch.zeros((k16, b2.shape[1]), dtype=b2.dtype, device=b2.device)
                pb[:k, :] = b2
                a2, b2 = pa, pb
            try:
                r = torch._scaled_mm(a2, b2.t().contiguous().t(), scale_a=one, scale_b=one,
                                     out_dtype=torch.float32)
            except (RuntimeError, ValueError) as e:
                raise Unsupported("torch._scaled_mm refused %s x %s: %s"
                                  % (a2.dtype, b2.dtype, str(e).strip().splitlines()[0][:300]))
            return r[0] if isinstance(r, tuple) else r  # torch < 2.5 also returns amax

        note.insert(0, "torch._scaled_mm")
        note.append("out_dtype=float32, scales 1.0, B column-major%s"
                    % (", K %d padded with zeros to %d" % (k, k16) if k16 != k else ""))
        if a.dim() == 2:
            return one_mm(a, b)
        return torch.stack([one_mm(a[i], b[i]) for i in range(a.shape[0])])

    def compute(self, c, x, note):
        torch = self.torch
        F = torch.nn.functional
        op, prec, call = c["op"], c.get("prec", ""), c.get("call", "")
        if scaled_mm_case(c):
            # the linear route's B is the weight as a model stores it, [out, in]
            b = x[1].transpose(-1, -2) if call == "linear" else x[1]
            return self.scaled_mm(x[0], b, note)
        if op == "gemm":
            self.gemm_flags(prec, note)
            a, b = x
            if call == "linear":  # b is the weight as a model stores it: [out, in]
                note.insert(0, "torch.nn.functional.linear")
                return F.linear(a, b)
            note.insert(0, "torch.matmul")
            return torch.matmul(a, b)
        if op == "conv2d":
            self.set_flag("backends.cudnn.allow_tf32", prec == "tf32", note)
            note.insert(0, "torch.nn.functional.conv2d")
            return F.conv2d(x[0], x[1], stride=c["stride"], padding=c["pad"])
        if op == "softmax":
            note.insert(0, "torch.softmax")
            return torch.softmax(x[0], dim=-1)
        if op == "layernorm":
            note.insert(0, "torch.nn.functional.layer_norm")
            return F.layer_norm(x[0], (c["len"],), x[1], x[2], c["eps"])
        if op == "rmsnorm":
            note.insert(0, "torch.nn.functional.rms_norm")
            return F.rms_norm(x[0], (c["len"],), x[1], c["eps"])
        if op == "sdpa":
            note.insert(0, "torch.nn.functional.scaled_dot_product_attention")
            q, k, v = x
            if call:
                note.append("backend=%s (forced)" % call)
                with self.sdpa_selector(call):
                    with warnings.catch_warnings(record=True) as w:
                        warnings.simplefilter("always")
                        try:
                            y = F.scaled_dot_product_attention(q, k, v, is_causal=bool(c["causal"]))
                        except RuntimeError as e:
                            if "No available kernel" in str(e):
                                why = "; ".join(str(m.message).strip().splitlines()[0]
                                                for m in w if str(m.message).strip())
                                raise Unsupported("the %s attention backend cannot run this case"
                                                  "%s" % (call, (": " + why[:600]) if why else ""))
                            raise
                return y[0]
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(c["causal"]))[0]
        if op == "sum":
            note.insert(0, "torch.sum")
            return x[0].sum(dim=-1)
        if op == "mean":
            note.insert(0, "torch.mean")
            return x[0].mean(dim=-1)
        if op == "unary":
            fn = c["unary"]
            note.insert(0, ("torch.nn.functional." if fn in ("gelu", "silu") else "torch.") + fn)
            return UNARY[fn](torch, x[0])
        if op == "convert":
            out = self.dtype(c["out"])
            if c["out"] == "f8e4m3":
                # saturating, as the case means; PyTorch's own conversion gives NaN from 480 up
                note.insert(0, "x.clamp(-448, 448).to(torch.float8_e4m3fn)")
                return x[0].clamp(-448.0, 448.0).to(out)
            note.insert(0, "x.to(torch.%s)" % str(out).split(".")[-1])
            return x[0].to(out)
        if op == "mlp":
            return self.autocast_mlp(c, x, note)
        raise Unsupported("no PyTorch call for operation %s" % op)

    def autocast_mlp(self, c, x, note):
        """Forward and backward of linear-GELU-linear-MSE under autocast with
        GradScaler; out: [loss, y, dW1, db1, dW2, db2] in float32."""
        torch = self.torch
        F = torch.nn.functional
        D, H = c["k"], c["n"]
        xin, w1e, w2e, target = x
        w1 = w1e[:, :D].contiguous().requires_grad_()
        b1 = w1e[:, D].contiguous().requires_grad_()
        w2 = w2e[:, :H].contiguous().requires_grad_()
        b2 = w2e[:, H].contiguous().requires_grad_()
        dt = torch.float16 if c["prec"] == "f16" else torch.bfloat16
        kind = "cuda" if self.is_gpu else "cpu"
        if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
            scaler = torch.amp.GradScaler(kind)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scaler = torch.cuda.amp.GradScaler(enabled=self.is_gpu)
        note.insert(0, "torch.autocast(%s, %s) linear-gelu-linear-mse_loss fwd+bwd" %
                    (kind, str(dt).split(".")[-1]))
        # fp32 accumulation, as the case declares (PyTorch's default lets cuBLAS reduce
        # split-K partial sums in fp16/bf16; the matmul.f16/bf16 cases cover that)
        self.set_flag("backends.cuda.matmul.allow_fp16_reduced_precision_reduction", False, note)
        self.set_flag("backends.cuda.matmul.allow_bf16_reduced_precision_reduction", False, note)
        with torch.autocast(device_type=kind, dtype=dt):
            h = F.linear(xin, w1, b1)
            a = F.gelu(h)
            y = F.linear(a, w2, b2)
            loss = F.mse_loss(y, target)
        scaler.scale(loss).backward()
        opt = torch.optim.SGD([w1, b1, w2, b2], lr=0.0)
        scaler.unscale_(opt)
        note.append("GradScaler scale=%g" % float(scaler.get_scale()) if scaler.is_enabled()
                    else "GradScaler disabled")
        parts = [loss.detach().float().reshape(1), y.detach().float().reshape(-1)]
        for p in (w1, b1, w2, b2):
            if p.grad is None:
                raise RuntimeError("no gradient reached a parameter")
            parts.append(p.grad.float().reshape(-1))
        return torch.cat(parts)

    def sync(self):
        if self.is_gpu:
            self.torch.cuda.synchronize(self.dev)

    SKIP_OPS = ("aten::empty", "aten::empty_strided", "aten::resolve_conj", "aten::resolve_neg",
                "aten::to", "aten::_to_copy", "aten::copy_", "aten::view", "aten::reshape",
                "aten::as_strided", "aten::contiguous", "aten::clone", "aten::empty_like",
                "aten::expand", "aten::t", "aten::transpose", "aten::unsqueeze", "aten::select",
                "aten::slice", "aten::detach", "aten::detach_", "aten::lift_fresh", "aten::alias")

    @staticmethod
    def raw_events(prof):
        """(name, device) of every event, from the profiler's raw results where this
        torch keeps them (no per-event Python objects), else from events()."""
        raw = getattr(getattr(prof, "profiler", None), "kineto_results", None)
        if raw is not None and hasattr(raw, "events"):
            try:
                return [(e.name(), str(e.device_type())) for e in raw.events()]
            except Exception:
                pass
        return [(e.name, str(getattr(e, "device_type", ""))) for e in prof.events()]

    @staticmethod
    def short_kernel(name):
        """A kernel's name without its return type and arguments."""
        name = name[5:] if name.startswith("void ") else name
        depth, cut = 0, len(name)
        for i, ch in enumerate(name):
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
            elif ch == "(" and depth == 0:
                cut = i
                break
        name = name[:cut]
        return name if len(name) <= 96 else name[:93] + "..."

    def kernels_of(self, prof):
        """Operators and device kernels the profiler saw, in order."""
        ops, kernels = [], []
        for name, dev in self.raw_events(prof):
            if dev.endswith("CUDA") or dev.endswith("HIP") or dev.endswith("PrivateUse1"):
                k = self.short_kernel(name)
                if k not in kernels and not k.startswith("Memset"):
                    kernels.append(k)
            elif name.startswith("aten::") and name not in ops and name not in self.SKIP_OPS:
                ops.append(name)
        return ops, kernels

    def run_case(self, c, note, call):
        """call() under the profiler (when it works), noting what ran."""
        torch = self.torch
        grad = c["op"] == "mlp"  # the autocast case runs a backward pass
        if not self.profile:
            with _null() if grad else torch.no_grad():
                y = call()
                self.sync()
            return y
        try:
            from torch.profiler import profile, ProfilerActivity
            acts = [ProfilerActivity.CPU]
            if self.is_gpu:
                acts.append(ProfilerActivity.CUDA)
            prof_cm = profile(activities=acts)
        except Exception as e:
            self.profile = False
            self.profile_note = "profiler unavailable: " + err_text(e)
            return self.run_case(c, note, call)
        with prof_cm as prof:
            with _null() if grad else torch.no_grad():
                y = call()
                self.sync()
        try:
            ops, kernels = self.kernels_of(prof)
        except Exception as e:
            ops, kernels = [], []
            self.profile_note = "profiler events unreadable: " + err_text(e)
        if c["op"] == "sdpa":
            joined = " ".join(ops).lower()
            for key, name in SDPA_OPS:
                if key in joined:
                    if name != c.get("call"):  # a forced backend is noted already
                        note.append("backend=%s" % name)
                    break
        if ops:
            note.append(">".join(o[6:] for o in ops[:4]))
        if kernels:
            note.append("kernels: " + ", ".join(kernels[:3]) +
                        (" (+%d)" % (len(kernels) - 3) if len(kernels) > 3 else ""))
        return y

    def test_fault(self, c):
        """GPUVET_TEST_FAULT=kill|hang|raise|oom for cases whose id contains
        GPUVET_TEST_FAULT_CASE (tests only)."""
        fault = os.environ.get("GPUVET_TEST_FAULT", "")
        if not fault or os.environ.get("GPUVET_TEST_FAULT_CASE", "") not in c["id"]:
            return
        if fault == "kill":
            os.kill(os.getpid(), 9)
        elif fault == "hang":
            while True:
                time.sleep(3600)
        elif fault == "raise":
            raise ValueError("gpuvet test fault in %s" % c["id"])
        elif fault == "oom":
            self.torch.empty(1 << 50, dtype=self.torch.uint8, device=self.dev)

    def run(self, req, payload):
        torch = self.torch
        c = req["case"]
        note = []
        try:
            self.check_supported(c)
            shapes = self.shapes(c)
            specs = req.get("inputs", [])
            if len(specs) != len(shapes):
                raise RuntimeError("%d inputs given, the PyTorch call takes %d"
                                   % (len(specs), len(shapes)))
            x, off = [], 0
            for spec, shape in zip(specs, shapes):
                n = int(spec["bytes"])
                x.append(self.tensor(spec, payload[off:off + n], shape))
                off += n
            if c["op"] == "gemm" and c.get("call") == "linear":  # B [k][n] -> weight [n][k]
                x[1] = x[1].transpose(-1, -2).contiguous()
            self.test_fault(c)
            if scaled_mm_case(c):
                self.fp8_scale()  # before the profiler watches: its fill is not the case's
            self.sync()
            t0 = time.perf_counter()
            y = self.run_case(c, note, lambda: self.compute(c, x, note))
            seconds = time.perf_counter() - t0
            want = self.dtype(req["out"]["dtype"])
            if y.dtype != want:
                raise RuntimeError("the PyTorch call returned %s, the case declares %s"
                                   % (str(y.dtype).split(".")[-1], str(want).split(".")[-1]))
            y = y.detach().contiguous().reshape(-1).cpu()
            if y.numel() != int(req["out"]["count"]):
                raise RuntimeError("the PyTorch call returned %d elements, the case has %d"
                                   % (y.numel(), int(req["out"]["count"])))
            out = bytearray(y.numel() * y.element_size())
            if out:
                torch.frombuffer(out, dtype=y.dtype).copy_(y)
        except Unsupported as e:
            self.restore_flags()
            return {"ok": False, "status": "unsupported", "error": str(e)}, b""
        except Exception as e:
            self.restore_flags()
            return self.failure(e), b""
        self.restore_flags()
        return {"ok": True, "seconds": seconds, "impl": ", ".join(note)}, out

    def failure(self, e):
        msg = err_text(e)
        if re.search(r"not implemented for '|NotImplementedError|does not support|is not "
                     r"supported|No available kernel|not compiled with", msg) or \
                isinstance(e, NotImplementedError):
            return {"ok": False, "status": "unsupported",
                    "error": "torch %s: %s" % (self.torch.__version__, msg)}
        oom = getattr(getattr(self.torch, "cuda", None), "OutOfMemoryError", None)
        if (oom is not None and isinstance(e, oom)) or re.search(
                r"out of memory|can't allocate memory|DefaultCPUAllocator", msg):
            if self.is_gpu:
                try:
                    self.torch.cuda.empty_cache()
                except Exception:
                    pass
            return {"ok": False, "status": "oom", "error": msg}
        if self.is_gpu and re.search(r"CUDA error|HIP error|hipError|cudaError|CUBLAS_STATUS|"
                                     r"CUDNN_STATUS|HIPBLAS_STATUS|device-side assert|illegal "
                                     r"memory access|unspecified launch failure", msg):
            return {"ok": False, "status": "device", "error": msg}
        return {"ok": False, "status": "error", "error": msg + where(e)}

    def serve(self):
        while True:
            try:
                req, payload = self.chan.recv()
            except EOFError:
                return
            op = req.get("op")
            if op == "open":
                self.chan.send(self.open(req))
            elif op == "supports":
                try:
                    self.check_supported(req["case"])
                    self.chan.send({"ok": True})
                except Unsupported as e:
                    self.chan.send({"ok": False, "status": "unsupported", "error": str(e)})
                except Exception as e:
                    self.chan.send(self.failure(e))
            elif op == "run":
                hdr, out = self.run(req, payload)
                self.chan.send(hdr, out)
            elif op == "describe":
                self.chan.send({"ok": True, "describe": self.describe()})
            elif op == "capture":
                gpuvet_capture.capture_model(self, req, payload)
            elif op == "replay":
                hdr, out = gpuvet_capture_replay.replay_op(self, req, payload)
                self.chan.send(hdr, out)
            elif op == "referee_open":
                self.chan.send(gpuvet_capture_replay.referee_open(self, req))
            elif op == "replay_span":
                hdr, out = gpuvet_capture_replay.replay_span(self, req, payload)
                self.chan.send(hdr, out)
            elif op == "bench_gemm":
                self.chan.send(gpuvet_bench.bench_gemm(self, req))
            else:
                self.chan.send({"ok": False, "status": "usage", "error": "unknown op %r" % op})


class _null(object):
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def main(fd, blobs):
    """Serves gpuvet on the socket fd; blobs: the files it sent that are not Python
    (the recorder in C), by name (the bootstrap in src/dev/torch/torch_proc.c calls this)."""
    gpuvet_capture_native.BLOBS.update(blobs)
    chan = Channel(fd)
    chan.send({"ok": True, "hello": "gpuvet torch worker", "protocol": PROTOCOL,
               "python": sys.version.split()[0], "executable": sys.executable,
               "pid": os.getpid()})
    Worker(chan).serve()

