#!/usr/bin/env python3
"""Build an OCI image layout holding one Python interpreter and its environment.

Usage: image_from_python.py PYTHON LAYOUT TAG

For the GPU machine, where no container engine exists and no image can be pulled: the
image is made from the machine's own PyTorch environment, so that `gpuvet check --image`
runs a real CUDA build of torch on the real GPU through gpuvet's isolated root.

One uncompressed layer holds: the environment's prefix (a virtual environment's
directory), the interpreter's base installation (its executable and standard library),
every shared library outside those that the interpreter or any extension module below
the prefix loads (the closure `ldd` reports without the caller's LD_LIBRARY_PATH, the
dynamic loader included), os-release, /etc/passwd and /etc/group, and the loader's cache. The NVIDIA driver's user-space libraries (libcuda and its
kin) are left out: a container gets them from the host, and so does gpuvet's isolated
root. The config's Env puts the environment's bin first on PATH (as conda and venv
images do) and sets OMP_NUM_THREADS=1.
"""
import hashlib
import json
import os
import subprocess
import sys
import tarfile

HOST_DRIVER = ("libcuda.so", "libnvidia-", "libcudadebugger.so")


def interp_facts(py):
    code = ("import sys, sysconfig, json; print(json.dumps({'prefix': sys.prefix,"
            " 'base': sys.base_prefix, 'exe': sys.executable,"
            " 'stdlib': sysconfig.get_paths()['stdlib']}))")
    return json.loads(subprocess.check_output([py, "-c", code], text=True))


def ldd(path):
    try:
        # the closure the interpreter has in the image: not through the caller's
        # LD_LIBRARY_PATH (on the GPU machine that names gpuvet's runtime folder)
        env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
        out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=60,
                             env=env).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            i = parts.index("=>")
            if i + 1 < len(parts) and parts[i + 1].startswith("/"):
                libs.append(parts[i + 1])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])
    return libs


def shared_objects(tree):
    for d, _, files in os.walk(tree):
        for f in files:
            if ".so" in f:
                p = os.path.join(d, f)
                if os.path.isfile(p) and not os.path.islink(p):
                    yield p


class Layer:
    def __init__(self, path):
        self.tar = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)
        self.seen = set()

    def add_parents(self, path):
        parts = path.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/" + "/".join(parts[:i])
            if d not in self.seen:
                self.seen.add(d)
                self.tar.addfile(self.tar.gettarinfo(d, arcname=d.lstrip("/")))

    def add(self, path, recursive=False):
        """path as it is (a link stays a link, and its target is added too)."""
        parent = os.path.realpath(os.path.dirname(path))
        path = os.path.join(parent, os.path.basename(path))
        if path in self.seen or not os.path.lexists(path):
            return
        self.add_parents(path)
        self.seen.add(path)
        info = self.tar.gettarinfo(path, arcname=path.lstrip("/"))
        if info.isreg():
            with open(path, "rb") as f:
                self.tar.addfile(info, f)
        else:
            self.tar.addfile(info)
        if info.issym():
            target = os.path.join(parent, os.readlink(path))
            self.add(os.path.normpath(target), recursive)
        elif info.isdir() and recursive:
            for name in sorted(os.listdir(path)):
                if name != "__pycache__":
                    self.add(os.path.join(path, name), True)

    def close(self):
        self.tar.close()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def put_json(blobs, obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, digest[7:]), "wb") as f:
        f.write(data)
    return {"digest": digest, "size": len(data)}


def main():
    py, lay, tag = sys.argv[1:4]
    facts = interp_facts(py)
    blobs = os.path.join(lay, "blobs", "sha256")
    os.makedirs(blobs, exist_ok=True)
    tmp = os.path.join(lay, "layer.tar")
    layer = Layer(tmp)
    for top in ("/bin", "/sbin", "/lib", "/lib64", "/usr/bin", "/usr/lib", "/tmp"):
        if os.path.lexists(top):
            layer.add(top)
    # as a base image has them: PyTorch asks getpwuid() for the user's name
    for f in ("/etc/os-release", "/usr/lib/os-release", "/etc/ld.so.cache", "/etc/ld.so.conf",
              "/etc/passwd", "/etc/group"):
        layer.add(f)
    layer.add(facts["prefix"], True)
    layer.add(facts["stdlib"], True)
    exe = os.path.join(facts["prefix"], "bin", "python")
    layer.add(exe)
    libs = set(ldd(os.path.realpath(exe)))
    for tree in (facts["prefix"], facts["stdlib"]):
        for so in shared_objects(tree):
            libs.update(ldd(so))
    for lib in sorted(libs):
        base = os.path.basename(lib)
        if lib.startswith((facts["prefix"] + "/", facts["stdlib"] + "/")) or \
                base.startswith(HOST_DRIVER):
            continue
        layer.add(lib)
    layer.close()
    layer_digest = sha256_file(tmp)
    size = os.path.getsize(tmp)
    os.rename(tmp, os.path.join(blobs, layer_digest[7:]))
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=%s/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:"
                           "/bin" % facts["prefix"], "OMP_NUM_THREADS=1"],
                   "Cmd": [exe]},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        "history": [{"created_by": "image_from_python.py " + py}],
    }
    manifest = {
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": dict(mediaType="application/vnd.oci.image.config.v1+json",
                       **put_json(blobs, config)),
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest, "size": size}],
    }
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": [dict(mediaType=manifest["mediaType"], **put_json(blobs, manifest),
                                annotations={"org.opencontainers.image.ref.name": tag})]}
    with open(os.path.join(lay, "index.json"), "w") as f:
        json.dump(index, f)
    with open(os.path.join(lay, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    print("%s: %d MiB layer, python %s" % (lay, size >> 20, exe))


if __name__ == "__main__":
    main()
