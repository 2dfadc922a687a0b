"""The one JVM of a Python process, through JPype.

A process can start JPype's JVM only once, so every JVM adapter goes through
``ensure_started``: the first caller starts it with its classpath, later callers add
their entries to the running JVM (JPype's dynamic class loader finds them). The JVM
options are fixed at the first start; rmqha asks for none.
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import tempfile
import urllib.parse
import zipfile
from pathlib import Path
from typing import Any, Iterable

from adapters import codec
from adapters.errors import AdapterError, UserError
from adapters.operations import OPERATIONS
from adapters.protocol import BAD_REQUEST, INTERNAL, PROTOCOL, UNSUPPORTED, Unsupported, error, ok


def _jpype():
    try:
        import jpype
    except ImportError:
        raise UserError("the jvm: adapters need JPype (pip install jpype1)") from None
    return jpype


def ensure_started(classpath: Iterable[str]) -> Any:
    """The ``jpype`` module with a running JVM whose classpath includes ``classpath``."""
    jpype = _jpype()
    entries = [str(e) for e in classpath if str(e)]
    if not jpype.isJVMStarted():
        jpype.startJVM(classpath=entries, convertStrings=True)
    else:
        for entry in entries:
            jpype.addClassPath(entry)
    return jpype


def split_classpath(text: str) -> list[str]:
    """A classpath string (``os.pathsep``-separated; ``dir/*`` globs all jars of a directory)."""
    return [e for e in text.split(os.pathsep) if e]


def load_class(spec: str, classpath: list[str], class_name: str) -> Any:
    """``class_name`` as loaded from ``classpath``; an ``AdapterError`` when the process's JVM
    already holds that class (or a superclass the classpath provides) from somewhere else."""
    jpype = ensure_started(classpath)
    try:
        cls = jpype.JClass(class_name)
    except Exception as exc:  # TypeError/java.lang.ClassNotFoundException/NoClassDefFoundError
        raise AdapterError(f"{spec}: cannot load class {class_name} "
                           f"(classpath {os.pathsep.join(classpath) or '(empty)'}): {exc}") from None
    check_loaded_from(spec, classpath, cls, "run it in its own process: stdio:java -cp CLASSPATH CLASS")
    return cls


def check_loaded_from(spec: str, classpath: list[str], cls: Any, instead: str) -> None:
    """An ``AdapterError`` when the JVM loaded ``cls`` (or a superclass ``classpath`` holds)
    from another build than ``classpath``: the adapter would judge that build under this
    one's name. ``instead`` says what the user can do."""
    shadowed = _loaded_elsewhere(cls, classpath)
    if shadowed is not None:
        name, origin = shadowed
        raise AdapterError(f"{spec}: class {name} is already loaded in this process from {origin}, not from "
                           f"{os.pathsep.join(classpath)}: a JVM loads a class once, so this adapter would run "
                           f"the other build ({instead})")


def _class_file(name: str) -> str:
    return name.replace(".", "/") + ".class"


def _provides(entry: str, name: str) -> bool:
    """Whether the classpath entry (a directory or a jar) holds the class ``name``."""
    if os.path.isdir(entry):
        return os.path.isfile(os.path.join(entry, _class_file(name)))
    try:
        with zipfile.ZipFile(entry) as jar:
            jar.getinfo(_class_file(name))
        return True
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


def _origin(c: Any, name: str) -> str | None:
    """The directory or jar a class was loaded from. JPype's dynamic class loader (entries
    added after the JVM started) records no location, so its resource is asked instead:
    the loader finds the class file where it found the class."""
    source = c.getProtectionDomain().getCodeSource()
    location = source.getLocation() if source is not None else None
    if location is not None:
        return os.path.realpath(str(location.toURI().getPath()))
    found = c.getClassLoader().getResource(_class_file(name))
    if found is None:
        return None
    url = str(found.toString())
    if url.startswith("jar:file:"):
        return os.path.realpath(urllib.parse.unquote(url[len("jar:file:"):].split("!/", 1)[0]))
    if url.startswith("file:"):
        path = urllib.parse.unquote(url[len("file:"):])
        return os.path.realpath(path[: -len(_class_file(name))] or "/")
    return None


def _loaded_elsewhere(cls: Any, classpath: list[str]) -> tuple[str, str] | None:
    """The first class of ``cls``'s superclass chain that the JVM loaded from outside
    ``classpath`` although ``classpath`` holds it (the class itself: although it was named
    here), with where it came from; None when every one comes from ``classpath``.

    JPype's JVM is one per process and its class loader keeps the first class of a name:
    two ``jvm:`` adapters naming one class in two builds would both run the first build."""
    entries = expand_classpath(classpath)
    mine = {os.path.realpath(e) for e in entries}
    c, named = cls.class_, True
    while c is not None and c.getClassLoader() is not None:  # (the JDK's own classes end it)
        name = str(c.getName())
        origin = _origin(c, name)
        if origin is None:
            break
        if origin not in mine and (named or any(_provides(e, name) for e in entries)):
            return name, origin
        c, named = c.getSuperclass(), False
    return None


def instantiate(spec: str, classpath: list[str], class_name: str) -> Any:
    """A new instance of ``class_name`` (a public no-argument constructor) from ``classpath``."""
    cls = load_class(spec, classpath, class_name)
    try:
        return cls()
    except Exception as exc:
        raise AdapterError(f"{spec}: cannot instantiate {class_name}: {exc}") from None


def expand_classpath(entries: Iterable[str]) -> list[str]:
    """Classpath entries with every ``dir/*`` replaced by the jars of ``dir`` (as the JVM does)."""
    out: list[str] = []
    for e in entries:
        out.extend(sorted(glob.glob(os.path.join(e[:-1], "*.jar"))) if e.endswith("*") else [e])
    return out


# ---------------------------------------------------------------- rmqha's own Java harness

HARNESS_SOURCE = Path(__file__).parent / "java" / "VirtualTime.java"


def _asm_jar() -> str:
    """ASM (shaded by Apache XBean) from the installed pyspark: the harness rewrites bytecode with it."""
    import pyspark

    found = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "xbean-asm9-shaded-*.jar")))
    if not found:
        raise UserError("the jvm:dledger virtual clock needs ASM: no xbean-asm9-shaded jar in pyspark/jars")
    return found[-1]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rmqha" / "java"


def harness_classpath() -> list[str]:
    """The compiled harness (adapters/java/VirtualTime.java) and ASM, compiled once per source.

    The classes go to ``$XDG_CACHE_HOME/rmqha/java/<hash>`` (a cache, reused by every
    later run); the compiler works in a directory beside it that is removed whatever
    happens, so nothing temporary is left behind.
    """
    asm = _asm_jar()
    digest = hashlib.sha256(HARNESS_SOURCE.read_bytes() + asm.encode()).hexdigest()[:16]
    out = _cache_dir() / digest
    if not (out / "rmqha" / "jvm" / "VirtualTime.class").exists():
        javac = shutil.which("javac")
        if javac is None:
            raise UserError("the jvm:dledger virtual clock is compiled on first use: install a JDK (javac)")
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=out.parent))
        try:
            done = subprocess.run([javac, "-nowarn", "-source", "8", "-target", "8", "-cp", asm, "-d", str(work),
                                   str(HARNESS_SOURCE)], capture_output=True, text=True)
            if done.returncode != 0:
                raise AdapterError(f"javac failed on {HARNESS_SOURCE}: {done.stderr.strip().splitlines()[:3]}")
            try:
                work.rename(out)
            except OSError:  # another process compiled it meanwhile
                pass
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return [str(out), asm]


# ---------------------------------------------------------------- real classes behind the protocol


class RealClassesServer:
    """The adapter protocol at handler level, each operation answered by real Java classes."""

    implementation = "?"
    OPERATIONS: dict = {}

    def __init__(self, classpath: list[str], profiles: dict[str, str]):
        self.profiles = profiles
        self.classpath = classpath
        self.jpype = ensure_started(classpath)

    def _load(self, what: str, load):
        try:
            return load()
        except Exception as exc:  # ClassNotFoundException, NoClassDefFoundError, ...
            raise AdapterError(f"jvm: cannot load {what} from {os.pathsep.join(self.classpath)}: {exc}") from None

    def version(self) -> str:
        return "unknown"

    def close(self) -> None:
        """Release what the server holds (called on ``bye``)."""

    def hello(self) -> dict:
        return {"protocol": PROTOCOL, "implementation": self.implementation, "version": self.version(),
                "profiles": self.profiles, "operations": sorted(self.OPERATIONS), "nodes": []}

    def handle(self, req: dict) -> dict:
        rid = req.get("id") if isinstance(req, dict) else None
        try:
            op = req["op"]
            if op == "hello":
                return ok(rid, self.hello())
            if op == "bye":
                self.close()
                return ok(rid, {})
            if op != "call":
                return error(rid, UNSUPPORTED, f"operation {op!r} is not supported (handler level only)")
            name = req["args"]["operation"]
            if name not in self.OPERATIONS:
                return error(rid, UNSUPPORTED, f"{name} is not driven on the real classes")
            return ok(rid, codec.encode(self.OPERATIONS[name](self, decode_args(name, req["args"]["args"]))))
        except (KeyError, TypeError, codec.CodecError) as exc:
            return error(rid, BAD_REQUEST, f"malformed request: {exc!r}")
        except Unsupported as exc:  # an input the real classes cannot be driven with: not applicable
            return error(rid, UNSUPPORTED, str(exc))
        except Exception as exc:  # noqa: BLE001 - the real code threw: reported, the driver decides
            return error(rid, INTERNAL, f"{type(exc).__name__}: {exc}")


def decode_args(name: str, raw: dict) -> dict:
    """The arguments of a handler-level call, decoded to spec records."""
    op = OPERATIONS[name]
    reg = codec.registry(op.namespace)
    return {p: codec.decode(raw[p], t, reg, p) for p, t in op.params}


def manifest_version(jclass) -> str:
    return str(jclass.class_.getPackage().getImplementationVersion() or "unknown (no jar manifest)")
