"""``rmqha fingerprint --adapter SPEC``: which profile does each procedure of an implementation match?

The same deterministic batch of inputs goes to the implementation (through its
adapter, any transport) and to the spec under every profile; for each procedure the
profiles that answer exactly like the implementation on every input are listed. A
release with no profile of its own is named by its fingerprint (0.3.2 combines the
0.4 heartbeat round with the 0.1/0.2 log rules); a procedure the implementation does
not offer is "not applicable"; "no profile" means it matches none (a bug, or a
release the spec does not model). Exit 0 if every offered procedure matches a
profile, 1 if one matches none.
"""
from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("fingerprint", help="name the profile each decision procedure of an implementation matches",
                       description=__doc__)
    p.add_argument("--adapter", default="reference", metavar="SPEC",
                   help="implementation under test (default: %(default)s; see docs/adapters.md)")
    p.add_argument("--samples", type=int, default=None, metavar="N",
                   help="inputs per procedure (default: 1500)")
    p.add_argument("--json", action="store_true", help="print the matches as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from adapters import resolve
    from conformance.errors import UserError
    from conformance.fingerprint import SAMPLES, fingerprint_adapter, render

    samples = args.samples if args.samples is not None else SAMPLES
    if samples < 1:
        raise UserError("--samples must be at least 1")
    adapter = resolve(args.adapter)
    matches = fingerprint_adapter(adapter, samples)
    if args.json:
        print(json.dumps({"adapter": args.adapter, "implementation": adapter.info.implementation,
                          "version": adapter.info.version, "fingerprint": matches}, indent=2))
    else:
        print(f"{adapter.info.implementation} {adapter.info.version} ({args.adapter}): {render(matches)}")
    return 1 if any(m == [] for m in matches.values()) else 0
