"""Authenticated, encrypted clients and least privilege: client settings, access errors, ACLs."""
