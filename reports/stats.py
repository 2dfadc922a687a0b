"""Small statistics for conformance matrices."""
from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_upper(failures: int, runs: int, z: float = Z95) -> float:
    """Upper end of the two-sided 95% Wilson score interval for a failure rate.

    With no failure in ``runs`` runs it is about 3.84 / (runs + 3.84), close to the
    "rule of three" (3 / runs); unlike the normal approximation it stays inside [0, 1]
    and is sensible for rates near 0, which is where conformance results live.
    """
    if runs <= 0 or failures >= runs:
        return 1.0  # exactly 1 at p = 1; the formula would round to just below it
    p = failures / runs
    z2 = z * z
    centre = p + z2 / (2 * runs)
    margin = z * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs))
    return min(1.0, (centre + margin) / (1 + z2 / runs))
