"""Dates written and read with a ``java.text.SimpleDateFormat`` pattern (``yyyyMMdd``, ``yyyy-MM-dd HH:mm:ss``).

No Kafka twin: Kafka uses ``java.text.SimpleDateFormat`` itself (in ``TimestampRouter`` and
``TimestampConverter``); this is the part of it those use, in UTC and the English locale, so that
a connector config written for Kafka reads the same here. Python's ``strftime`` has a different
syntax (``%Y%m%d``), and a config is written in Java's.

Letters: ``G`` era, ``y`` year (``yy``: two digits), ``M`` month (``MMM`` Jan, ``MMMM`` January),
``d`` day of month, ``D`` day of year, ``E`` day name (``EEE`` Mon, ``EEEE`` Monday), ``a`` AM/PM,
``H`` hour 0-23, ``k`` 1-24, ``K`` 0-11, ``h`` 1-12, ``m`` minute, ``s`` second, ``S`` millisecond,
``z`` zone name, ``Z`` zone as ``+0000``, ``X`` zone as ``Z``. Text in single quotes is literal
(``''`` is a quote); any other ASCII letter is refused, as Java refuses it: "Illegal pattern
character". Parsing is strict where Java's is lenient: a day 32 is an error, not the 1st of the
next month.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")  # fmt: skip
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
LETTERS = "GyMdDEaHkKhmsSzZX"
_NUMERIC = "yMdDHkKhmsS"


@dataclass(frozen=True)
class _Token:
    letter: str | None  # None: literal text
    count: int
    text: str = ""

    @property
    def numeric(self) -> bool:
        return (
            self.letter is not None
            and self.letter in _NUMERIC
            and not (self.letter == "M" and self.count >= 3)
        )


class SimpleDateFormat:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _compile(pattern)
        self._parser: re.Pattern[str] | None = None

    def format(self, date: datetime) -> str:
        """``date`` written in UTC by the pattern."""
        return "".join(_format_token(t, date.astimezone(UTC)) for t in self._tokens)

    def parse(self, text: str) -> datetime:
        """The instant ``text`` gives, fields it lacks taken from 1970-01-01 00:00:00 UTC; a
        ``ValueError`` when it does not follow the pattern."""
        if self._parser is None:
            self._parser = re.compile(_parse_regex(self._tokens), re.IGNORECASE)
        match = self._parser.fullmatch(text)
        if match is None:
            raise ValueError(f"Unparseable date: {text!r}")
        return _assemble(self._tokens, match)


def _compile(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = i + 1
            text = []
            while True:
                if end >= len(pattern):
                    raise ValueError("Unterminated quote")
                if pattern[end] == "'":
                    if end + 1 < len(pattern) and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            tokens.append(_Token(None, 0, "".join(text) if end > i + 1 else "'"))
            i = end + 1
        elif c.isascii() and c.isalpha():
            if c not in LETTERS:
                raise ValueError(f"Illegal pattern character '{c}'")
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            tokens.append(_Token(c, j - i))
            i = j
        else:
            tokens.append(_Token(None, 0, c))
            i += 1
    return tokens


def _format_token(t: _Token, d: datetime) -> str:
    if t.letter is None:
        return t.text
    n = t.count
    match t.letter:
        case "G":
            return "AD"
        case "y":
            return f"{d.year % 100:02d}" if n == 2 else f"{d.year:0{n}d}"
        case "M":
            if n >= 4:
                return MONTHS[d.month - 1]
            if n == 3:
                return MONTHS[d.month - 1][:3]
            return f"{d.month:0{n}d}"
        case "d":
            return f"{d.day:0{n}d}"
        case "D":
            return f"{d.timetuple().tm_yday:0{n}d}"
        case "E":
            return DAYS[d.weekday()] if n >= 4 else DAYS[d.weekday()][:3]
        case "a":
            return "AM" if d.hour < 12 else "PM"
        case "H":
            return f"{d.hour:0{n}d}"
        case "k":
            return f"{d.hour or 24:0{n}d}"
        case "K":
            return f"{d.hour % 12:0{n}d}"
        case "h":
            return f"{d.hour % 12 or 12:0{n}d}"
        case "m":
            return f"{d.minute:0{n}d}"
        case "s":
            return f"{d.second:0{n}d}"
        case "S":
            return f"{d.microsecond // 1000:0{n}d}"
        case "z":
            return "Coordinated Universal Time" if n >= 4 else "UTC"
        case "Z":
            return "+0000"
        case _:  # "X"
            return "Z"


def _parse_regex(tokens: list[_Token]) -> str:
    parts = []
    for i, t in enumerate(tokens):
        if t.letter is None:
            parts.append(re.escape(t.text))
        elif t.numeric:
            # Java's rule for abutting numbers ("yyyyMMdd"): a number followed directly by another
            # takes exactly its pattern's width; otherwise it takes every digit there is.
            abutting = i + 1 < len(tokens) and tokens[i + 1].numeric
            parts.append(f"(\\d{{{t.count}}})" if abutting else "(\\d+)")
        elif t.letter == "M":
            parts.append("(" + "|".join(m if t.count >= 4 else m[:3] for m in MONTHS) + ")")
        elif t.letter == "E":
            parts.append("(" + "|".join(DAYS) + "|" + "|".join(d[:3] for d in DAYS) + ")")
        elif t.letter == "a":
            parts.append("(AM|PM)")
        elif t.letter == "G":
            parts.append("(AD)")
        elif t.letter == "z":
            parts.append("(UTC|GMT|Coordinated Universal Time)")
        else:  # "Z", "X": an offset
            parts.append(r"(Z|[+-]\d{2}:?\d{2}|[+-]\d{2})")
    return "".join(parts)


def _assemble(tokens: list[_Token], match: re.Match[str]) -> datetime:
    fields = {"y": 1970, "M": 1, "d": 1, "H": 0, "m": 0, "s": 0, "S": 0}
    pm: bool | None = None
    offset = timedelta(0)
    groups = iter(match.groups())
    for t in (t for t in tokens if t.letter is not None):
        value = next(groups)
        if t.numeric:
            number = int(value)
            if t.letter == "y" and t.count == 2 and len(value) == 2:
                number += 2000  # Java picks the century that puts it within 80 years before now and 20 after; here, 20xx
            key = {"k": "H", "K": "H", "h": "H"}.get(t.letter, t.letter)
            if t.letter == "k" and number == 24:
                number = 0
            if t.letter == "h" and number == 12:
                number = 0
            if (
                key != "D"
            ):  # the day of year follows from the date; like the day name, it is read and not used
                fields[key] = number
        elif t.letter == "M":
            fields["M"] = next(i for i, m in enumerate(MONTHS, 1) if m.lower().startswith(value.lower()[:3]))
        elif t.letter == "a":
            pm = value.upper() == "PM"
        elif t.letter in "ZX" and value.upper() != "Z":
            digits = value[1:].replace(":", "")
            offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
            offset = -offset if value[0] == "-" else offset
    if pm:
        fields["H"] += 12
    date = datetime(fields["y"], fields["M"], fields["d"], fields["H"], fields["m"], fields["s"],
                    fields["S"] * 1000, tzinfo=UTC)  # fmt: skip
    return date - offset
