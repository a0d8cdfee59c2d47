"""Half-open time intervals within one day, in minutes since midnight."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def parse_hhmm(text: str) -> int:
    """Minutes since midnight of an "HH:MM" time: "09:30" -> 570."""
    hours, _, minutes = text.partition(":")
    value = int(hours) * 60 + int(minutes)
    if not 0 <= value <= 24 * 60:
        raise ValueError(f"not a time of day: {text!r}")
    return value


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@dataclass(frozen=True, order=True)
class Interval:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"interval ends before it starts: {self.start}-{self.end}")

    @classmethod
    def parse(cls, text: str) -> Interval:
        """Parse "HH:MM-HH:MM": "09:00-10:30" -> Interval(540, 630)."""
        start, _, end = text.partition("-")
        return cls(parse_hhmm(start), parse_hhmm(end))

    def __str__(self) -> str:
        return f"{_hhmm(self.start)}-{_hhmm(self.end)}"


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Union of `intervals` as sorted, non-overlapping intervals (touching ones are joined)."""
    merged: list[Interval] = []
    for interval in sorted(intervals):
        if merged and interval.start <= merged[-1].end:
            merged[-1] = Interval(merged[-1].start, max(merged[-1].end, interval.end))
        else:
            merged.append(interval)
    return merged


def free_slots(day: Interval, busy: Iterable[Interval], *, min_minutes: int = 15) -> list[Interval]:
    """Gaps of at least `min_minutes` inside `day` that no busy interval covers."""
    slots: list[Interval] = []
    cursor = day.start
    for interval in merge(busy):
        if interval.end <= day.start or interval.start >= day.end:
            continue
        if interval.start - cursor >= min_minutes:
            slots.append(Interval(cursor, interval.start))
        cursor = max(cursor, interval.end)
    if day.end - cursor >= min_minutes:
        slots.append(Interval(cursor, day.end))
    return slots
