"""The seal is lengthened until no skill body contains it.

A crc collision with a body is astronomically rare, so no end-to-end input
reaches the lengthening loop; this test makes it certain by replacing zlib
for one call. Without the check, the seal would be one the body contains,
and that body could close its own element (found by a mutant that dropped
the check and survived the whole suite; issue 14).
"""
import sys
import types

import pytest

from conftest import load_hook


@pytest.fixture(scope="module")
def hook():
    return load_hook("briefing_preload_seal")


def constant_crc(monkeypatch, value):
    fake = types.ModuleType("zlib")
    fake.crc32 = lambda data, start=0: value
    monkeypatch.setitem(sys.modules, "zlib", fake)


@pytest.mark.parametrize("zeros", [16, 24, 33, 100])
def test_a_body_that_contains_the_seal_gets_a_longer_one(hook, monkeypatch, zeros):
    constant_crc(monkeypatch, 0)
    body = "text " + "0" * zeros + " text\n"
    skills = [hook.Skill("s", "briefing", "/x/s/SKILL.md", body=body, size=len(body)),
              hook.Skill("t", "briefing", "/x/t/SKILL.md", body="plain\n", size=6)]
    seal = hook.make_seal("agent", skills)
    assert seal not in body
    assert set(seal) == {"0"} and len(seal) == (zeros // 8 + 1) * 8


def test_the_seal_is_never_shorter_than_twelve_hex_digits(hook, monkeypatch):
    constant_crc(monkeypatch, 0xABCDEF)
    seal = hook.make_seal("agent", [hook.Skill("s", "briefing", "/x/s/SKILL.md", body="b\n", size=2)])
    assert len(seal) >= 12 and seal.startswith("00abcdef")
