"""ParcelNet rates API."""

from __future__ import annotations

from shipping import settings
from shipping.carriers.base import Parcel, Quote
from shipping.http import client
from shipping.money import to_cents


class ParcelNet:
    name = "parcelnet"

    def quote(self, parcel: Parcel, from_postcode: str, to_postcode: str) -> list[Quote]:
        response = client().post(
            f"{settings.PARCELNET_BASE_URL}/rates",
            headers={"X-Api-Key": settings.PARCELNET_API_KEY},
            json={
                "from": from_postcode,
                "to": to_postcode,
                "weight_g": parcel.weight_grams,
                "dimensions_cm": [parcel.length_cm, parcel.width_cm, parcel.height_cm],
            },
        )
        response.raise_for_status()
        return [
            Quote(
                carrier=self.name,
                service=rate["service_code"],
                price_cents=to_cents(rate["amount"]),
                currency=rate["currency"],
                transit_days=int(rate["transit_days"]),
            )
            for rate in response.json()["rates"]
        ]
