"""Kilo's records for the audit: those of OpenCode, its fork, under Kilo's own names
(``$XDG_DATA_HOME/kilo/kilo.db`` and ``kilo/log/``); see audit/opencode.py."""
from .opencode import causes_of, read_of, sessions_of


def sessions(machine, since, newest=None):
    return sessions_of("kilo", machine, since, newest)


def read(machine, session, log):
    return read_of("kilo", machine, session, log)


def causes(machine, run):
    return causes_of("kilo", machine, run)
