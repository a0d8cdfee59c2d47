from shipping.carriers.base import Parcel
from shipping.carriers.parcelnet import ParcelNet
from tests.recorded import recorded_responses


def test_quote_converts_amounts_to_cents():
    with recorded_responses("parcelnet/rates_ok.json"):
        quotes = ParcelNet().quote(Parcel(1200, 30, 20, 10), "10115", "80331")
    assert [q.price_cents for q in quotes] == [649, 1290]
    assert {q.service for q in quotes} == {"standard", "express"}
