"""Numbers as a person reads them in a message: no exponent notation ("1e+09")."""
from __future__ import annotations

import math


def plain_number(x: float) -> str:
    """``x`` written out: whole numbers with thousands separators, others with up to six significant
    digits; beyond what reads written out (1e15 and more, or under 1e-6), as a power of ten. Never
    an exponent in the "1e+09" notation.

    >>> plain_number(1e9), plain_number(200000), plain_number(2.5), plain_number(1e-6), plain_number(-3.0)
    ('1,000,000,000', '200,000', '2.5', '0.000001', '-3')
    >>> plain_number(1e300), plain_number(2.5e-9)
    ('1 x 10^300', '2.5 x 10^-9')
    """
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x != 0 and not 1e-6 <= abs(x) < 1e15:
        exp = math.floor(math.log10(abs(x)))
        return f"{x / 10 ** exp:.3g} x 10^{exp}"
    if x == int(x):
        return f"{int(x):,}"
    s = f"{x:.6g}"
    if "e" in s:
        digits = max(0, 5 - math.floor(math.log10(abs(x))))
        s = f"{x:,.{digits}f}".rstrip("0").rstrip(".")
    return s
