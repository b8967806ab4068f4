"""Emitters: pure functions from model objects to the text of generated files."""
