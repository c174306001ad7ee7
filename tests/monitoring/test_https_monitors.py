"""Monitors over https, on 127.0.0.1 with a certificate authority made for the test (tests/tls.py),
as a home ntfy or Healthchecks server has: the pings and the alert reach it once its authority is
trusted (the system's certificates, or SSL_CERT_FILE in the bot's environment); a certificate
that is not trusted, or not made out for the URL's server, is one WARNING line saying so and the
request is never sent; a redirect from https to http is not followed."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from conftest import BotHome
from monitor_server import MonitorServer, redirect
from tls import Authority
from x_emulator import XEmulator

from twitterbot.monitoring.endpoint import parse
from twitterbot.monitoring.request import Call
from twitterbot.state.store import HistoryStore

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")

CHECK = "5f0c7a52-9d3e-4b1f-8a6c-2e4d9b7f1a30"
TOPIC = "bot-alerts-7Qx2Lm"


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return Authority.make(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def secure(authority: Authority) -> Iterator[MonitorServer]:
    with MonitorServer(tls=authority.issue("127.0.0.1", "localhost")) as server:
        yield server


def _wired(home: BotHome, url: str) -> None:
    home.write_env(HEALTHCHECK_URL=f"{url}/ping/{CHECK}", NOTIFY_URL=f"{url}/{TOPIC}")


def _alerts_recorded(home: BotHome) -> list:
    with HistoryStore(home.path / "state" / "history.sqlite3") as store:
        return store.open_alerts()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_pings_and_an_alert_reach_an_https_monitor_whose_authority_is_trusted(
    home: BotHome, secure: MonitorServer, emulator: XEmulator, authority: Authority, host: str
) -> None:
    _wired(home, f"https://{host}:{secure.port}")
    emulator.fail_next("unauthorized")
    run = home.run("--force", env={"SSL_CERT_FILE": str(authority.ca)})
    assert run.returncode == 77  # the refused keys', whatever the monitor does
    assert "did not take" not in run.stderr, run.stderr
    assert sorted(heard.path for heard in secure.heard) == sorted(
        [f"/ping/{CHECK}/start", f"/ping/{CHECK}/77", f"/{TOPIC}"]
    )
    assert secure.to(f"/{TOPIC}")[0].headers["host"] == f"{host}:{secure.port}"
    assert _alerts_recorded(home) == ["keys:x"]


def test_an_untrusted_certificate_is_one_warning_a_request_and_nothing_is_sent(
    home: BotHome, secure: MonitorServer, emulator: XEmulator
) -> None:
    _wired(home, secure.url)
    emulator.fail_next("unauthorized")
    run = home.run("--force")  # the test's authority is not among the system's certificates
    assert run.returncode == 77
    assert "Traceback" not in run.stderr and "Exception in thread" not in run.stderr
    warnings = [line for line in run.stderr.splitlines() if "did not take" in line]
    assert len(warnings) == 3, run.stderr  # the start ping, the end ping, the alert
    for line in warnings:
        assert "its certificate is not trusted (" in line and "SSL_CERT_FILE" in line, line
    assert any("NOTIFY_URL" in line and "the next run sends it again" in line for line in warnings)
    assert secure.heard == [] and len(secure.handshakes_failed) == 3
    assert _alerts_recorded(home) == []


def test_a_certificate_for_another_name_is_refused_on_the_pinned_connection(
    home: BotHome, authority: Authority, emulator: XEmulator
) -> None:
    """Trusted, but made out for another server: the name is checked on the connection made to
    the address that was looked up, whether the URL names the server or its address."""
    with MonitorServer(tls=authority.issue("monitor.example.org", "10.1.2.3")) as other:
        for host in ("127.0.0.1", "localhost"):
            _wired(home, f"https://{host}:{other.port}")
            emulator.fail_next("unauthorized")
            run = home.run("--force", env={"SSL_CERT_FILE": str(authority.ca)})
            warnings = [line for line in run.stderr.splitlines() if "did not take" in line]
            assert len(warnings) == 3, run.stderr
            assert all("its certificate is not valid for the URL's server (" in line for line in warnings)
            assert all(f"'{host}'" in line and "by a name its certificate is made out for" in line for line in warnings)
        assert other.heard == []


def test_a_redirect_from_https_to_http_is_not_followed(
    secure: MonitorServer, authority: Authority, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(authority.ca))
    with MonitorServer() as plain:
        secure.answers = [redirect(307, f"{plain.url}/{TOPIC}")]
        problem = Call(parse(f"{secure.url}/{TOPIC}"), body=b"alert", seconds=5).send()
        assert problem and "redirects from https to http" in problem and "not followed" in problem
        assert [heard.path for heard in secure.heard] == [f"/{TOPIC}"] and plain.heard == []
        secure.answers = [redirect(308, lambda url: f"{url}/{TOPIC}/moved"), redirect(302, "/x")]
        secure.answers_to["/x"] = [b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]
        assert Call(parse(f"{secure.url}/{TOPIC}"), body=b"alert", seconds=5).send() is None  # https to https


def test_an_untrusted_certificate_is_not_taken_by_a_call_either(secure: MonitorServer, tmp_path: Path) -> None:
    other = Authority.make(tmp_path / "other", "Another CA")
    for trusted in ({}, {"SSL_CERT_FILE": str(other.ca)}):
        with pytest.MonkeyPatch.context() as patch:
            for name, value in trusted.items():
                patch.setenv(name, value)
            problem = Call(parse(f"{secure.url}/{TOPIC}"), body=b"alert", seconds=5).send()
        assert problem and problem.startswith("its certificate is not trusted (")
    assert secure.heard == []
