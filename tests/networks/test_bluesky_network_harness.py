"""The test network's harness (tests/pds/network.py) says why when it cannot run: skipped without
PostgreSQL or Redis, failed instead under TWITTERBOT_REQUIRE_APPVIEW=1 (as CI runs)."""

from __future__ import annotations

import pytest
from pds import network


@pytest.mark.parametrize("missing", ["postgres", "redis"])
def test_a_missing_server_skips_saying_which_and_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    monkeypatch.delenv(network.REQUIRE, raising=False)
    monkeypatch.setattr(network, "_postgres_bin", lambda: None)
    monkeypatch.setattr(network.shutil, "which", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match="apt-get install (postgresql|redis-server)"):
        next(getattr(network, missing)())


def test_under_require_a_missing_server_fails_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(network.REQUIRE, "1")
    monkeypatch.setattr(network, "_postgres_bin", lambda: None)
    with pytest.raises(pytest.fail.Exception, match="TWITTERBOT_REQUIRE_APPVIEW=1"):
        next(network.postgres())
