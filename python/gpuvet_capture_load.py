# What a capture takes in from outside (docs/capture.md, docs/security.md): the
# user's model (a file's function or a torch.export program, its bytes checked
# against the sha256 gpuvet checked), its example inputs and the call that feeds
# them to it, its output's tensors; and the only names a capture document may
# make this worker reach in torch: dtypes, layouts and memory formats from fixed
# tables (torch_enum), operators by the op-name grammar, resolved to OpOverloads
# of the dispatcher only (op_of).
import dataclasses
import hashlib
import linecache
import re
import traceback
from collections.abc import Mapping

from gpuvet_capture_tensors import encode
from gpuvet_errors import Unsupported, err_text

# ---------------------------------------------------------------- the model


class ModelError(Exception):
    """The user's model file or function failed: the message names the file and line."""


def user_frame(e, path):
    """The last traceback frame inside the user's file: ' (model.py:12 in make)'."""
    for f in reversed(traceback.extract_tb(e.__traceback__)):
        if f.filename == path:
            return " (%s:%d in %s)" % (path, f.lineno, f.name)
    return ""


def load_state(torch, model, inputs, specs, payload, path):
    """Gives the model another capture's parameters, buffers and inputs (bisect's
    run of the model in this environment, so that it computes on the same values)."""
    params = dict(model.named_parameters()) if hasattr(model, "named_parameters") else {}
    bufs = dict(model.named_buffers()) if hasattr(model, "named_buffers") else {}
    off = 0
    for spec in specs:
        n = int(spec["nbytes"])
        dt = torch_enum(torch, "dtype", spec["dtype"])
        t = torch.frombuffer(payload[off:off + n], dtype=dt) if n else torch.zeros(0, dtype=dt)
        t = t.reshape(spec["shape"])
        off += n
        kind, _, name = spec["role"].partition(":")
        if kind == "input":
            i = int(name)
            if i >= len(inputs) or list(inputs[i].shape) != list(t.shape):
                raise ModelError("%s: input %s here does not match the capture's" % (path, name))
            inputs[i] = t.to(inputs[i].dtype)
            continue
        target = params.get(name) if kind == "param" else bufs.get(name)
        if target is None or list(target.shape) != list(t.shape):
            raise ModelError("%s: the model here has no %s %s of shape %s like the capture's"
                             % (path, "parameter" if kind == "param" else "buffer", name,
                                list(t.shape)))
        with torch.no_grad():
            target.copy_(t)
    return inputs


def export_schema(torch):
    """This PyTorch's torch.export schema version as "8.2", or None."""
    try:
        from torch._export.serde.schema import SCHEMA_VERSION
        return "%d.%d" % tuple(SCHEMA_VERSION[:2])
    except Exception:
        return None


def pt2_origin(torch, data):
    """Why a .pt2 may not load here, from the archive itself: the PyTorch that saved
    it and its export schema (recorded in the program's JSON, in every layout since
    2.1), against this PyTorch's; "" when the archive does not say or matches."""
    import io
    import json
    import zipfile
    try:
        with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
            for info in z.infolist():
                name = info.filename
                if not name.endswith(".json") or info.file_size > 256 << 20 or not (
                        "/models/" in "/" + name or name.endswith("exported_program.json")):
                    continue
                doc = json.loads(z.read(info))
                saved = doc.get("torch_version") if isinstance(doc, dict) else None
                if isinstance(saved, str):
                    break
            else:
                return ""
    except Exception:
        return ""
    sv = doc.get("schema_version")
    schema = "%s.%s" % (sv.get("major"), sv.get("minor")) if isinstance(sv, dict) else None
    mine = export_schema(torch)
    if saved == torch.__version__ and schema == mine:
        return ""
    return ("; the program was saved by PyTorch %s%s, this is PyTorch %s%s: load it with a "
            "PyTorch that reads that format (the one that saved it, or newer), or export it "
            "again with this one" % (saved, " (export schema %s)" % schema if schema else "",
                                     torch.__version__, " (schema %s)" % mine if mine else ""))


def load_model(torch, req, payload, seed):
    """The model and its example inputs. req["model"] is path/to/file.py:function
    (its text arrives in req["source"], so the file need not be visible to this
    interpreter, e.g. inside a root filesystem) or a torch.export program (.pt2,
    its bytes the payload), whose recorded example inputs are used."""
    spec = req["model"]
    want = req.get("file_sha256")
    if want is not None:  # gpuvet read and checked these bytes: run nothing else
        got = hashlib.sha256(bytes(payload) if spec.endswith(".pt2")
                             else req["source"].encode("utf-8")).hexdigest()
        if got != want:
            raise ModelError("%s: the model's bytes here do not have the sha256 gpuvet checked "
                             "(%s): not run" % (spec, want))
    torch.manual_seed(seed)
    if spec.endswith(".pt2"):
        export = getattr(torch, "export", None)
        if export is None or not hasattr(export, "load"):
            raise ModelError("%s: torch %s cannot load torch.export programs (added in 2.1)"
                             % (spec, torch.__version__))
        import io
        try:
            ep = export.load(io.BytesIO(bytes(payload)))
        except Exception as e:
            raise ModelError("%s: torch.export.load raised %s%s" % (spec, err_text(e),
                                                                  pt2_origin(torch, payload)))
        ex = getattr(ep, "example_inputs", None)
        if not ex:
            raise ModelError("%s: the exported program carries no example inputs" % spec)
        args, kwargs = ex if isinstance(ex, tuple) and len(ex) == 2 and \
            isinstance(ex[1], dict) else (ex, {})
        return (ep.module(),) + example_call(torch, args, kwargs, spec, "") + \
            (spec, "(exported program)")
    path, sep, fn = spec.rpartition(":")
    if not sep or not path or not fn.isidentifier():
        raise ModelError("--model %s: expected path/to/file.py:function or a .pt2 program" % spec)
    # the source goes into linecache under the file's name, so that what reads a model's
    # source through inspect (torch.jit.script, tracebacks) finds it where the file
    # cannot be read (inside a root filesystem); mtime None: never checked against disk
    src = req["source"]
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    try:
        code = compile(src, path, "exec")
        mod = {"__name__": "gpuvet_user_model", "__file__": path}
        exec(code, mod)
    except Exception as e:
        raise ModelError("%s raised %s while loading%s" % (path, err_text(e), user_frame(e, path)))
    make = mod.get(fn)
    if not callable(make):
        raise ModelError("%s has no function %s" % (path, fn))
    torch.manual_seed(seed)
    try:
        got = make()
    except Exception as e:
        raise ModelError("%s:%s() raised %s%s" % (path, fn, err_text(e), user_frame(e, path)))
    if not isinstance(got, (tuple, list)) or len(got) not in (2, 3):
        raise ModelError("%s:%s() must return (model, inputs) or (model, args, kwargs), not %s"
                         % (path, fn, type(got).__name__))
    model = got[0]
    if not callable(model):
        raise ModelError("%s:%s() returned a model that cannot be called (%s)"
                         % (path, fn, type(model).__name__))
    if len(got) == 3:
        args, kwargs = got[1], got[2]
        if not isinstance(kwargs, Mapping):
            raise ModelError("%s:%s(): the keyword arguments must be a dict, not %s"
                             % (path, fn, type(kwargs).__name__))
    elif isinstance(got[1], Mapping):
        args, kwargs = (), got[1]
    else:
        args, kwargs = got[1], {}
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)):
        raise ModelError("%s:%s(): the inputs must be a tensor, a tuple of arguments or a dict "
                         "of keyword arguments, not %s" % (path, fn, type(args).__name__))
    return (model,) + example_call(torch, args, kwargs, path, fn) + (path, fn)


class Slot(object):
    """Where the i-th tensor of the example inputs goes in the model's call."""
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def example_call(torch, args, kwargs, path, fn):
    """(the tensors of the example inputs, in order; the call with a Slot for each):
    the tensors may sit in tuples, lists and dicts, among values of other kinds
    (None, numbers, strings), which are passed as they are."""
    leaves = []

    def lift(v, depth):
        if isinstance(v, torch.Tensor):
            leaves.append(v)
            return Slot(len(leaves) - 1)
        if not isinstance(v, (tuple, list, Mapping)):
            return v
        if depth > 16:
            raise ModelError("%s:%s(): the inputs are nested more than 16 deep" % (path, fn))
        n = len(leaves)
        if isinstance(v, Mapping):
            got = dict((k, lift(x, depth + 1)) for k, x in v.items())
        elif isinstance(v, tuple) and hasattr(v, "_fields"):
            got = type(v)(*[lift(x, depth + 1) for x in v])
        else:
            got = [lift(x, depth + 1) for x in v]
            got = tuple(got) if isinstance(v, tuple) else got
        return got if len(leaves) > n else v  # (one without tensors stays as it is)

    call = (tuple(lift(x, 1) for x in args),
            dict((str(k), lift(x, 1)) for k, x in kwargs.items()))
    return leaves, call


def fill(v, leaves):
    """The call (or part of it) with each Slot replaced by its tensor in leaves."""
    if isinstance(v, Slot):
        return leaves[v.i]
    t = type(v)
    if t is tuple or t is list:
        return t(fill(x, leaves) for x in v)
    if t is dict:
        return dict((k, fill(x, leaves)) for k, x in v.items())
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return t(*[fill(x, leaves) for x in v])
    return v  # (what example_call left as it was)


def call_model(model, call, leaves):
    """The model run on the example inputs (leaves: their tensors, on the device)."""
    args, kwargs = fill(call, leaves)
    return model(*args, **kwargs)


def call_json(torch, call, ids):
    """The call as JSON for the capture's header: each input tensor as {"$t": id}
    (ids: the capture's ids of the leaves), other values as op arguments are."""
    def enc(v):
        if isinstance(v, Slot):
            return {"$t": ids[v.i]}
        if isinstance(v, (tuple, list)):
            return [enc(x) for x in v]
        if isinstance(v, dict):
            return dict((str(k), enc(x)) for k, x in v.items())
        e = encode(torch, None, v, None, set())
        if isinstance(e, dict) and "$repr" in e:  # (an object's address differs run to run)
            e = {"$repr": re.sub(r" at 0x[0-9a-fA-F]+", "", e["$repr"])}
        return e
    return {"args": enc(call[0]), "kwargs": enc(call[1])}


def tuple_fields(v):
    """The field names of a named tuple or a struct sequence (torch.return_types,
    as torch.max(x, dim) returns), else ()."""
    if not isinstance(v, tuple):
        return ()
    for attr in ("_fields", "__match_args__"):
        f = getattr(type(v), attr, None)
        if isinstance(f, tuple) and all(isinstance(n, str) for n in f):
            return f
    return ()


def out_tensors(torch, out, path):
    """The model's output's tensors as [(name, tensor)], depth first: the output
    may be a tensor or tuples, lists, dicts and dataclasses of them (a dict in the
    order of its sorted keys, a dataclass, a named tuple or a struct sequence
    in the order of its fields; a name is the path to the tensor, "logits", "hidden.3", "pair.lo");
    values of other kinds among them (None, numbers) are left out. ModelError
    without any."""
    found = []

    def join(name, part):
        return "%s.%s" % (name, part) if name else str(part)

    def walk(v, name, depth):
        if isinstance(v, torch.Tensor):
            found.append((name or "output", v))
        elif depth > 16:
            return
        elif isinstance(v, (tuple, list)):
            fields = tuple_fields(v)
            for i, x in enumerate(v):
                walk(x, join(name, fields[i] if i < len(fields) else i), depth + 1)
        elif isinstance(v, Mapping):
            for k in sorted(v, key=str):
                walk(v[k], join(name, k), depth + 1)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                walk(getattr(v, f.name, None), join(name, f.name), depth + 1)

    walk(out, "", 0)
    if not found:
        raise ModelError("%s: the model's output holds no tensor (it may be a tensor, or "
                         "tuples, lists, dicts and dataclasses with tensors in them) but is %s"
                         % (path, type(out).__name__))
    return found


# ---------------------------------------------------------------- what a capture may name


# The names a capture may give a dtype, a layout or a memory format ({"$dtype": ...} in
# an op's arguments, a tensor's "dtype"). A document's name is looked up on torch only
# when it is in its table, and used only when what torch has under it is of that kind:
# no other attribute of torch is ever reached from a capture.
TORCH_ENUMS = {
    "dtype": frozenset((
        "float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
        "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2",
        "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool",
        "complex32", "complex64", "complex128", "qint8", "quint8", "qint32", "quint4x2",
        "quint2x4")),
    "layout": frozenset(("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                         "sparse_bsc", "_mkldnn", "jagged")),
    "memory_format": frozenset(("contiguous_format", "channels_last", "channels_last_3d",
                                "preserve_format")),
}


def quoted(v):
    """A document's value for a message: ASCII, escaped, quoted, at most 200 characters."""
    return ascii(v)[:200]


def torch_enum(torch, kind, name):
    """torch.<name> for a dtype, layout or memory_format name from a capture (TORCH_ENUMS)."""
    if not isinstance(name, str) or name not in TORCH_ENUMS[kind]:
        raise Unsupported("unknown %s %s: not replayed" % (kind, quoted(name)))
    v = getattr(torch, name, None)
    if not isinstance(v, getattr(torch, kind)):
        raise Unsupported("this torch has no %s %s: not replayed" % (kind, name))
    return v


# An op's name in a capture: NAMESPACE.NAME.OVERLOAD (str() of an OpOverload), each part
# an identifier, no part __x__ but the NAME of ATen's operator methods. The same grammar
# as gv_cap_op_name_ok in src/capture/gvcap.c.
OP_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
DUNDER_OPS = frozenset(("__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__iand__",
                        "__ior__", "__ixor__", "__ilshift__", "__irshift__"))


def op_name_ok(name):
    parts = name.split(".") if isinstance(name, str) else ()
    if len(parts) != 3 or not all(OP_PART.match(p) for p in parts):
        return False
    return all(not (len(p) >= 4 and p.startswith("__") and p.endswith("__")) or
               (k == 1 and p in DUNDER_OPS) for k, p in enumerate(parts))


def dispatcher_op(torch, func):
    """Whether the OpOverload func is an operator of PyTorch's dispatcher (what a
    TorchDispatchMode records), not one of TorchScript's own (aten::save)."""
    has = getattr(torch._C, "_dispatch_has_kernel", None)
    try:
        s = func._schema
        return bool(has and has(s.name + ("." + s.overload_name if s.overload_name else "")))
    except Exception:
        return False


def file_argument(func):
    """The name of a string argument of func that names a file (aten::from_file's
    filename), or None."""
    try:
        for a in func._schema.arguments:
            if str(a.type) in ("str", "Optional[str]", "str?") and \
                    ("file" in a.name or "path" in a.name):
                return a.name
    except Exception:
        return "(schema unreadable)"
    return None


def op_of(torch, name):
    """torch.ops.aten.convolution.default from "aten.convolution.default": the only way
    a capture's op name becomes something to call. Resolved part by part (the
    namespace, its packet, the overload), each part checked first (op_name_ok) and
    each step's result checked for its type; the result must be an OpOverload of the
    dispatcher that takes no file name. Anything else is "not an operator"."""
    ops = torch._ops
    if not op_name_ok(name):
        raise Unsupported("not an operator: not replayed (%s is not NAMESPACE.NAME.OVERLOAD)"
                          % quoted(name))
    ns, op, overload = name.split(".")
    try:
        space = getattr(torch.ops, ns)
        packet = getattr(space, op) if isinstance(space, ops._OpNamespace) else None
        func = getattr(packet, overload) if isinstance(packet, ops.OpOverloadPacket) else None
    except Exception:  # no such operator here (older torch raise other than AttributeError)
        raise Unsupported("this torch has no operator %s" % name)
    if func is None:
        raise Unsupported("this torch has no operator %s" % name)
    if not isinstance(func, ops.OpOverload) or not dispatcher_op(torch, func):
        raise Unsupported("not an operator: not replayed (%s is not an operator of PyTorch's "
                          "dispatcher here)" % name)
    arg = file_argument(func)
    if arg:
        raise Unsupported("not replayed: %s takes a file name (%s), which a capture may not "
                          "give" % (name, arg))
    return func
