# What the worker's modules tell gpuvet about a failure: Unsupported (a case or
# replay this torch or device cannot run, reported with why) and the one-line
# text of an exception.
import os
import traceback


class Unsupported(Exception):
    """The case cannot run in this torch or on this device (skipped, with why)."""


def err_text(e):
    msg = str(e).strip().splitlines()
    first = msg[0] if msg else ""
    return "%s: %s" % (type(e).__name__, first) if first else type(e).__name__


def where(e):
    """The innermost frame of a traceback, as file:line in function."""
    tb = traceback.extract_tb(e.__traceback__)
    if not tb:
        return ""
    f = tb[-1]
    return " (at %s:%d in %s)" % (os.path.basename(f.filename), f.lineno, f.name)
