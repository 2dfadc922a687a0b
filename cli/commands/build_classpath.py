"""``rmqha build-classpath SOURCE --out DIR``: RocketMQ's controller and epoch-file classes, without Maven.

Compiles, with ``javac``, the classes ``--adapter jvm:rocketmq`` drives from a checkout
of apache/rocketmq (5.1 or later: develop, a ``rocketmq-all-5.1.x`` tag, ...) into DIR,
using the jars the installed pyspark ships and rmqha's small stand-ins for the rest
(``adapters/jvm_build.py``), and prints the classpath to give the adapter. With Maven at
hand, build the real modules instead (docs/adapters.md, "jvm:rocketmq").
"""
from __future__ import annotations

import os

from cli.args import output_dir


def register(sub) -> None:
    p = sub.add_parser("build-classpath", help="compile RocketMQ's controller and epoch-file classes for jvm:rocketmq",
                       description=__doc__)
    p.add_argument("source", help="a checkout of apache/rocketmq (5.1 or later)")
    p.add_argument("--out", required=True, type=output_dir,
                   help="directory for the classes (created; rebuilt if rmqha made it)")
    p.add_argument("--commit", default="", help="the commit or tag to record as the version (default: git HEAD)")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from adapters.jvm_build import build_rocketmq, classes_built

    classpath = build_rocketmq(args.source, args.out, args.commit)
    joined = os.pathsep.join(classpath)
    print(f"compiled {classes_built(Path(args.out))} classes into {args.out}")
    print(f"export RMQHA_ROCKETMQ_CLASSPATH='{joined}'")
    print(f"or: --adapter 'jvm:rocketmq:{joined}'")
    return 0
