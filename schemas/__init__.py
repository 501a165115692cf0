"""The wire contract of croupier: msgspec Structs per topic, decoders, the canonical encoder."""
