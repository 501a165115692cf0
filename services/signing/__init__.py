"""Signed round events (contract section 8): the signed message, signing, checking, key files."""
