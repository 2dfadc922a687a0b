"""``rmqha serve-stdio``: an implementation rmqha ships, served over the stdio adapter protocol.

Reads protocol requests as JSON lines on stdin and answers each on stdout
(docs/adapter-protocol.md). It exists to test the stdio transport end to end and as
a working example of a server: ``rmqha check --adapter "stdio:rmqha serve-stdio"``.
Same as ``python -m adapters.stdio_server``.
"""
from __future__ import annotations


def register(sub) -> None:
    from adapters.stdio_server import add_arguments

    p = sub.add_parser("serve-stdio", help="serve the reference (or PySyncObj) over the stdio adapter protocol",
                       description=__doc__)
    add_arguments(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from adapters.stdio_server import make_server, serve
    from conformance.errors import UserError

    try:
        server = make_server(args.implementation, args.mutant, args.profile, args.links, args.journal)
    except KeyError as exc:
        raise UserError(str(exc).strip('"')) from None
    return serve(server)
