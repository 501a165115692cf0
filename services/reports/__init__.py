"""Regulator reports over what croupier decided."""
