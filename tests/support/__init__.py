"""Shared test helpers (the fake model server)."""
