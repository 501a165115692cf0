"""The PAR sheet for people and machines: a text table and JSON, digits exact from Fractions."""

from fractions import Fraction
from math import floor
from typing import Any

import msgspec

from .sheet import Line, ParSheet

TITLES = {"sicbo": "Sic Bo", "thai-hilo": "Thai HiLo", "xocdia": "Xoc Dia"}


def percent(x: Fraction, places: int = 4) -> str:
    """x as a percentage rounded half away from zero to `places` decimals, without floats."""
    scaled = abs(x) * 100 * 10**places
    whole, part = divmod(floor(scaled + Fraction(1, 2)), 10**places)
    sign = "-" if x < 0 and (whole or part) else ""
    return f"{sign}{whole}.{part:0{places}d}" if places else f"{sign}{whole}"


def ratio(x: Fraction) -> str:
    """x as "num/den", always with its denominator."""
    return f"{x.numerator}/{x.denominator}"


def odds(line: Line) -> str:
    """The winning odds of a line, lowest first: "1:1/2:1/3:1"; "-" when it never wins."""
    return "/".join(f"{num}:{den}" for num, den in line.odds) or "-"


def pick(line: Line) -> str:
    """The pick of a line as the bettor writes it, "-" for none."""
    return ",".join(str(n) for n in line.wager.pick) or "-"


def render_text(sheet: ParSheet) -> str:
    """An operator's table: one row per wager, percentages with 4 decimals, then the figures."""
    head = ["kind", "pick", "odds", "P(win)", "P(lose)", "P(push)", "RTP", "house edge"]
    if sheet.stake is not None:
        head.append(f"RTP at {sheet.stake}")
    head.append("min stake")
    rows = [head]
    for x in sheet.lines:
        shares = [x.win, x.lose, x.push, x.rtp, x.edge]
        if x.rtp_at_stake is not None:
            shares.append(x.rtp_at_stake)
        row = [x.wager.kind, pick(x), odds(x), *(f"{percent(s)}%" for s in shares)]
        rows.append([*row, str(x.min_stake)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    table = [
        "  ".join(
            c.ljust(w) if i < 3 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    best = ", ".join(f"{w.kind} {','.join(map(str, w.pick))}".strip() for w in sheet.best)
    return "\n".join(
        [
            f"{TITLES.get(sheet.game, sheet.game)} ({sheet.game}) PAR sheet: "
            f"{sheet.outcomes} equally likely outcomes, exact odds",
            "",
            *table,
            "",
            f"maximum RTP: {percent(sheet.max_rtp)}% ({ratio(sheet.max_rtp)}): {best}",
            f"minimum stake: {sheet.min_stake} (from this stake on, floor rounding keeps every "
            f"wager within {percent(sheet.tolerance, 2)} percentage point of its exact RTP)",
            "",
        ]
    )


def figure(x: Fraction) -> dict[str, str]:
    """An exact fraction with its percentage for display."""
    return {"fraction": ratio(x), "percent": percent(x)}


def as_dict(sheet: ParSheet) -> dict[str, Any]:
    """The sheet as plain JSON-ready data: fractions as "num/den" with a decimal percentage."""
    return {
        "game": sheet.game,
        "outcomes": sheet.outcomes,
        "stake": sheet.stake,
        "tolerance": figure(sheet.tolerance),
        "max_rtp": figure(sheet.max_rtp),
        "best": [{"kind": w.kind, "pick": list(w.pick)} for w in sheet.best],
        "min_stake": sheet.min_stake,
        "wagers": [
            {
                "kind": x.wager.kind,
                "pick": list(x.wager.pick),
                "odds": [f"{num}:{den}" for num, den in x.odds],
                "win": figure(x.win),
                "lose": figure(x.lose),
                "push": figure(x.push),
                "rtp": figure(x.rtp),
                "house_edge": figure(x.edge),
                "rtp_at_stake": None if x.rtp_at_stake is None else figure(x.rtp_at_stake),
                "min_stake": x.min_stake,
            }
            for x in sheet.lines
        ],
    }


def render_json(sheet: ParSheet) -> str:
    """The sheet as indented JSON, keys in a fixed order, ending with a newline."""
    return msgspec.json.format(msgspec.json.encode(as_dict(sheet)), indent=2).decode() + "\n"
