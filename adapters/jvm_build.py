"""Build the RocketMQ classes ``jvm:rocketmq`` drives from a source tree, without Maven.

With Maven at hand a user builds the modules (docs/adapters.md); without it (no Maven
Central), ``build_rocketmq(SOURCE, OUT)`` compiles just the classes the adapter drives
— ``ReplicasInfoManager``, ``DefaultElectPolicy``, ``DefaultBrokerHeartbeatManager``,
``EpochFileCache`` and ``MQVersion`` — from a checkout of apache/rocketmq with ``javac``,
letting the compiler pull in what they reference from the ``controller``, ``common``,
``remoting`` and ``store`` modules. What lives outside those modules comes from the jars
the installed pyspark ships (netty, commons-lang3, guava, jackson, ...) and, for the rest,
from small stand-ins in ``adapters/java/rocketmq/`` (rmqha's own code: a shaded-slf4j logger
that discards, fastjson's facade over Jackson, hessian, commons-collections/validator, and
two RocketMQ classes cut down so that the netty server and the JRaft controller stay out
of the build). No stand-in is on any path a handler-level call takes.

The output directory also gets ``rmqha-build.properties`` (the release from the tree's
pom.xml, the git commit when the tree is a checkout), which the adapter shows as the
version.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

from adapters.errors import UserError

STUBS = Path(__file__).parent / "java" / "rocketmq"
MODULES = ("controller", "common", "remoting", "store")
_MAIN = "src/main/java/org/apache/rocketmq"
ROOTS = (
    f"controller/{_MAIN}/controller/impl/manager/ReplicasInfoManager.java",
    f"controller/{_MAIN}/controller/elect/impl/DefaultElectPolicy.java",
    f"controller/{_MAIN}/controller/impl/heartbeat/DefaultBrokerHeartbeatManager.java",
    f"store/{_MAIN}/store/ha/autoswitch/EpochFileCache.java",
    f"common/{_MAIN}/common/MQVersion.java",
)
BUILD_PROPERTIES = "rmqha-build.properties"


def pyspark_jars() -> str:
    """``<pyspark>/jars/*``: the dependencies the installed pyspark ships."""
    import pyspark

    return os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")


def source_version(source: Path) -> tuple[str, str]:
    """(release, commit) of a RocketMQ tree: pom.xml's version (or ${revision}) and the git HEAD."""
    pom = (source / "pom.xml").read_text(encoding="utf-8", errors="replace")
    project = re.sub(r"<parent>.*?</parent>", "", pom, count=1, flags=re.S)
    found = re.search(r"<version>([^<]+)</version>", project)
    version = found.group(1).strip() if found else "unknown"
    if version == "${revision}":
        revision = re.search(r"<revision>([^<]+)</revision>", pom)
        version = revision.group(1).strip() if revision else version
    commit = ""
    if shutil.which("git") and (source / ".git").exists():
        done = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        commit = done.stdout.strip() if done.returncode == 0 else ""
    return version, commit


def build_rocketmq(source: str | Path, out: str | Path, commit: str = "") -> list[str]:
    """Compile the driven classes of the RocketMQ tree ``source`` into ``out``; the classpath to use."""
    source, out = Path(source), Path(out)
    if not source.is_dir():
        raise UserError(f"{source}: not a directory (want a checkout of apache/rocketmq)")
    missing = [r for r in ROOTS if not (source / r).is_file()]
    if missing:
        raise UserError(f"{source}: not a RocketMQ 5.1+ source tree (no {missing[0]})")
    javac = shutil.which("javac")
    if javac is None:
        raise UserError("building the RocketMQ classes needs a JDK (javac on the PATH)")
    if out.exists() and any(out.iterdir()):
        if not (out / BUILD_PROPERTIES).is_file():
            raise UserError(f"{out}: exists and was not made by rmqha (no {BUILD_PROPERTIES}); choose an empty directory")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    jars = pyspark_jars()
    sourcepath = os.pathsep.join([str(STUBS)] + [str(source / m / "src" / "main" / "java") for m in MODULES])
    command = [javac, "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-nowarn", "-proc:none", "-encoding",
               "UTF-8", "-d", str(out), "-cp", jars, "-sourcepath", sourcepath] + [str(source / r) for r in ROOTS]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "error:" in line]
        raise UserError(f"javac failed on {source} ({len(errors)} errors; first: {(errors or ['?'])[0].strip()})")
    version, head = source_version(source)
    (out / BUILD_PROPERTIES).write_text(f"version={version}\ncommit={commit or head}\nsource={source.resolve()}\n",
                                        encoding="utf-8")
    return [str(out.resolve()), jars]


def classes_built(out: Path) -> int:
    return len(glob.glob(str(out / "**" / "*.class"), recursive=True))
