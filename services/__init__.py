"""Croupier's services: games, settlement (the fold), statistics, history; their shells."""
