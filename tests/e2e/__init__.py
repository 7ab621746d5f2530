"""End-to-end suite (a package, so that its conftest does not shadow tests/conftest.py)."""
