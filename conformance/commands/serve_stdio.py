"""``rmqha serve-stdio``: rmqha's reference implementation as a stdio adapter.

Reads protocol requests as JSON lines on stdin and answers each on stdout
(docs/adapter-protocol.md). It exists to test the stdio transport end to end and as
a working example of a server: ``rmqha check --adapter "stdio:rmqha serve-stdio"``.
"""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("serve-stdio", help="serve the reference implementation over the stdio adapter protocol",
                       description=__doc__)
    p.add_argument("--mutant", default=None, help="serve the reference with this known bug")
    p.add_argument("--profile", default="dledger-0.4", help="DLedger profile (default: %(default)s)")
    p.set_defaults(func=run)


def run(args) -> int:
    from adapters.reference_server import ReferenceServer, serve_stdio
    from conformance.errors import UserError

    try:
        server = ReferenceServer(mutant=args.mutant, dledger_profile=args.profile)
    except KeyError as exc:
        raise UserError(str(exc).strip('"')) from None
    return serve_stdio(server)
