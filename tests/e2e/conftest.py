"""End-to-end suite: the real Claude Code and Codex CLIs against a scripted fake model.

The CLIs are installed by ``scripts/setup-e2e`` into ``.e2e/node_modules``.
Without them every test here is skipped with a message saying so, unless
``BRIEFING_E2E_REQUIRED=1`` is set (CI), in which case they fail.
"""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for path in (str(HERE), str(HERE.parent)):
    if path not in sys.path:
        sys.path.insert(0, path)

import runners  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "e2e: end-to-end test driving the real Claude Code / Codex CLI (needs scripts/setup-e2e)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def clis():
    """(claude, codex) binary paths; skips (or fails when required) without them."""
    try:
        return runners.binaries()
    except runners.Missing as missing:
        message = "e2e: %s (set BRIEFING_E2E_REQUIRED=1 to make this an error)" % missing
        if os.environ.get("BRIEFING_E2E_REQUIRED") == "1":
            pytest.fail(message.replace(" (set BRIEFING_E2E_REQUIRED=1 to make this an error)", ""),
                        pytrace=False)
        pytest.skip(message)


@pytest.fixture
def serve(tmp_path):
    """``serve(server_class, script)`` -> a started fake model server, stopped after the test.

    Every request it logged is kept as ``requests-N.jsonl`` in the test's folder for
    post-mortems; the test fails if the script raised, or if the server saw a request
    that was neither a model request nor one it expects (``expected_other``).
    """
    servers = []

    def start(server_class, script):
        server = server_class(script).start()
        servers.append(server)
        return server

    yield start
    for n, server in enumerate(servers):
        server.stop()
        server.dump(tmp_path / ("requests-%d.jsonl" % n))
    for server in servers:
        assert not server.errors, "fake model script failed:\n" + "\n".join(server.errors)
        unexpected = [o for o in server.other if not server.expected_other(o)]
        assert not unexpected, "requests other than model requests: %r" % unexpected
