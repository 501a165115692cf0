"""The read side: bet history, round recall and the live 50-round statistics board."""
