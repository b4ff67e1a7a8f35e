"""Tiny streaming agents for the stdio round trip, one per library, run as scripts."""
