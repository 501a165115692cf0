"""The 50-round statistics board of every table, and the outcome integrity tests."""
