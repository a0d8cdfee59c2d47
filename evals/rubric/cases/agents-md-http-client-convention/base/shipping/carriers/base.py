"""What every carrier adapter provides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Parcel:
    weight_grams: int
    length_cm: int
    width_cm: int
    height_cm: int


@dataclass(frozen=True)
class Quote:
    carrier: str
    service: str
    price_cents: int
    currency: str
    transit_days: int


class Carrier(Protocol):
    name: str

    def quote(self, parcel: Parcel, from_postcode: str, to_postcode: str) -> list[Quote]: ...
