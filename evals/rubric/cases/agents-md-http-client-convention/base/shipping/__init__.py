"""Parcel carrier integrations for checkout."""
