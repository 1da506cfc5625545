# The recorder in C (python/native/_gpuvet_capture_record.c, the per-op work of
# gpuvet_capture_record's dispatch mode, built against CPython's stable ABI): its
# bytes arrive with these modules (BLOBS, set by gpuvet_torch_worker.main) and are
# loaded from an anonymous file, never from the user's disk. docs/capture.md,
# "The recorder in C".
import os

from gpuvet_capture_schema import SCHEMA_FACTS, schema_facts
from gpuvet_capture_tensors import (DEVICE_NAMES, NAME_OF_DTYPE, device_names, dtype_name,
                                    encode, storage_of)
from gpuvet_errors import err_text

# the files gpuvet sent that are not Python, by name: "_gpuvet_capture_record.so",
# where this gpuvet has the recorder in C
BLOBS = {}
SO_NAME = "_gpuvet_capture_record.so"

NATIVE = {}  # "module": the recorder in C, or None; "why": what was used and why


def native_recorder(torch):
    """_gpuvet_capture_record, the recorder's per-op work in C (python/native/
    _gpuvet_capture_record.c, built against CPython's stable ABI and sent with these
    modules), loaded once; None where this gpuvet has none, this interpreter cannot
    load it, or the test setting GPUVET_TEST_CAPTURE_RECORDER=python asks for the
    Python (=corrupt loads half of it). NATIVE["why"] says which recorder runs and why."""
    if "why" in NATIVE:
        return NATIVE["module"]
    mod, why = None, "native"
    data = BLOBS.get(SO_NAME)
    test = os.environ.get("GPUVET_TEST_CAPTURE_RECORDER")  # tests: python, corrupt
    if test == "python":
        why = "python (GPUVET_TEST_CAPTURE_RECORDER=python)"
    elif not data:
        why = "python (this gpuvet was built without the recorder in C)"
    else:
        try:
            if test == "corrupt":
                data = data[:len(data) // 2]
            mod = load_extension(SO_NAME[:-3], data)
            mod.setup({"Tensor": torch.Tensor, "cpu": torch.device("cpu"), "torch": torch,
                       "NAME_OF_DTYPE": NAME_OF_DTYPE, "SCHEMA_FACTS": SCHEMA_FACTS,
                       "DEVICE_NAMES": DEVICE_NAMES, "schema_facts": schema_facts,
                       "encode": encode, "storage_of": storage_of, "dtype_name": dtype_name,
                       "device_names": device_names})
        except Exception as e:
            mod, why = None, "python (the recorder in C did not load: %s)" % err_text(e)
    NATIVE["module"], NATIVE["why"] = mod, why
    return mod


def elf_fits(data):
    """Why a shared object's bytes cannot be loaded whole (not ELF, or a segment or
    the section table past the end: mapping those would kill the process with
    SIGBUS), or None."""
    import struct
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2:
        return "not a 64-bit ELF file"
    end = "<" if data[5] == 1 else ">"
    phoff, shoff = struct.unpack_from(end + "QQ", data, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 54)
    if phoff + phnum * phentsize > len(data) or shoff + shnum * shentsize > len(data):
        return "its headers end past its %d bytes" % len(data)
    for i in range(phnum):
        kind, _, off = struct.unpack_from(end + "IIQ", data, phoff + i * phentsize)
        filesz = struct.unpack_from(end + "Q", data, phoff + i * phentsize + 32)[0]
        if kind == 1 and off + filesz > len(data):  # PT_LOAD
            return "segment %d ends at byte %d of %d" % (i, off + filesz, len(data))
    return None


def load_extension(name, data):
    """Imports the extension module in data (a shared object's bytes) from an
    anonymous file, or where there is none from a temporary one, removed again."""
    import importlib.machinery
    import importlib.util
    import tempfile
    bad = elf_fits(data)
    if bad:
        raise ImportError("%s: %s" % (name, bad))
    fd, path, tmp = -1, None, None
    try:
        try:
            fd = os.memfd_create(name)
            path = "/proc/self/fd/%d" % fd
            if not os.path.exists(path):  # no /proc here (a root without it)
                os.close(fd)
                fd = -1
        except (AttributeError, OSError):
            fd = -1
        if fd < 0:
            tmp = tempfile.NamedTemporaryFile(prefix="gpuvet-", suffix=".so", delete=False)
            fd, path = os.dup(tmp.fileno()), tmp.name
            tmp.close()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        return mod
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            os.unlink(tmp.name)
