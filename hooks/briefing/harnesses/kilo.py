"""Kilo: OpenCode's fork, briefed by the same plugin; what differs is in ``opencode.CLIS``."""
from .opencode import make_harness

HARNESS = make_harness("kilo")
