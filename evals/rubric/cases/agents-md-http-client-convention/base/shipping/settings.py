"""Carrier endpoints and credentials, read from the environment."""

from __future__ import annotations

import os

PARCELNET_BASE_URL = os.environ.get("PARCELNET_BASE_URL", "https://api.parcelnet.example/v2")
PARCELNET_API_KEY = os.environ.get("PARCELNET_API_KEY", "")
SWIFTPOST_BASE_URL = os.environ.get("SWIFTPOST_BASE_URL", "https://api.swiftpost.example")
SWIFTPOST_TOKEN = os.environ.get("SWIFTPOST_TOKEN", "")
