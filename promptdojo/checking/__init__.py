"""Checking: run every lesson cell and report failures at their markdown lines."""
