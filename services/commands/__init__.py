"""The `croupier` command's sub-commands, by who runs them (`services.cli` assembles them)."""
