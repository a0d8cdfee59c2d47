"""Registry of the carriers checkout can quote."""

from __future__ import annotations

from shipping.carriers.base import Carrier
from shipping.carriers.parcelnet import ParcelNet

CARRIERS: dict[str, Carrier] = {
    "parcelnet": ParcelNet(),
}
