"""The live view of `croupier run`: a pure dashboard folded from the topics, and its rendering."""
