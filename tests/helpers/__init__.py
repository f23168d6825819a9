"""Shared test support (not test modules): tolerances, builders, fixtures used by several test files."""
