"""Heartbeat pings and alerts, heard by a listener on 127.0.0.1 that records every request: what
a run, the daemon's run and a job send, one alert per problem, and a monitor that never answers
costing a run at most 10 s without changing its exit status."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Iterator, List, NamedTuple

import pytest
from conftest import REGISTRY, BotHome
from hypothesis import example, given
from hypothesis import strategies as st
from loopback import LoopbackServer
from x_emulator import XEmulator

from twitterbot.cli import main
from twitterbot.errors import ConfigError
from twitterbot.monitoring import Alert
from twitterbot.monitoring.monitor import WAIT, LiveMonitor
from twitterbot.settings.loading import load_config
from twitterbot.state.store import HistoryStore


class Heard(NamedTuple):
    method: str
    path: str
    body: str
    headers: dict


class Listener:
    """A ping and ntfy server: records each request; `hang` makes it never answer."""

    def __init__(self) -> None:
        self.heard: List[Heard] = []
        self.hang = threading.Event()
        self.release = threading.Event()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8") if length else ""
                listener.heard.append(Heard(self.command, self.path, body, dict(self.headers)))
                if listener.hang.is_set():
                    listener.release.wait(30)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"OK")

            do_GET = do_POST = _answer

        self.server = LoopbackServer(Handler).start()

    def paths(self) -> List[str]:
        return [heard.path for heard in self.heard]


@pytest.fixture
def listener() -> Iterator[Listener]:
    heard = Listener()
    yield heard
    heard.release.set()
    heard.server.stop()


def _wired(home: BotHome, listener: Listener, **settings: str) -> None:
    home.write_env(
        HEALTHCHECK_URL=f"{listener.server.url}/ping/abc-123",
        NOTIFY_URL=f"{listener.server.url}/alerts-topic",
        **settings,
    )


def _run(home: BotHome, *args: str) -> int:
    return main(["--env-file", str(home.env_file), *args], environ={})


def test_a_run_that_posts_pings_start_and_success(home: BotHome, listener: Listener, emulator: XEmulator) -> None:
    _wired(home, listener)
    assert _run(home, "--force") == 0
    assert listener.paths() == ["/ping/abc-123/start", "/ping/abc-123"]
    assert listener.heard[1].method == "POST" and listener.heard[1].body.startswith("posted")
    assert len(emulator.texts) == 1


def test_a_skip_is_a_good_end(home: BotHome, listener: Listener) -> None:
    _wired(home, listener, TWEET_ONE_IN="1000")
    seed = next(s for s in range(100) if __import__("random").Random(s).randrange(1000) != 0)
    assert _run(home, "--seed", str(seed)) == 0
    assert listener.paths() == ["/ping/abc-123/start", "/ping/abc-123"]


def test_a_dry_run_pings_nothing(home: BotHome, listener: Listener) -> None:
    _wired(home, listener)
    assert _run(home, "--dry-run", "--force") == 0
    assert listener.heard == []


def test_refused_keys_fail_the_ping_and_alert_once_until_a_post_goes(
    home: BotHome, listener: Listener, emulator: XEmulator
) -> None:
    _wired(home, listener)
    secret = emulator.keys["access_token_secret"]
    for _ in range(2):
        emulator.fail_next("unauthorized")
        status = _run(home, "--force")
        assert status != 0
    pings = [heard for heard in listener.heard if heard.path.startswith("/ping")]
    assert [heard.path for heard in pings] == ["/ping/abc-123/start", f"/ping/abc-123/{status}"] * 2
    assert "refused" in pings[1].body or "401" in pings[1].body or "keys" in pings[1].body
    alerts = [heard for heard in listener.heard if heard.path == "/alerts-topic"]
    assert len(alerts) == 1  # the same failure again is quiet
    assert alerts[0].method == "POST" and alerts[0].headers["Priority"] == "urgent"
    assert "refused the keys" in alerts[0].headers["Title"] and "warning" in alerts[0].headers["Tags"]
    assert all(secret not in heard.body and secret not in heard.path for heard in listener.heard)
    assert _run(home, "--force") == 0  # a post goes through: the problem is settled
    emulator.fail_next("unauthorized")
    _run(home, "--force")
    assert len([heard for heard in listener.heard if heard.path == "/alerts-topic"]) == 2


def test_out_of_credits_alerts(home: BotHome, listener: Listener, emulator: XEmulator) -> None:
    _wired(home, listener)
    emulator.fail_next("credits")
    assert _run(home, "--force") != 0
    alerts = [heard for heard in listener.heard if heard.path == "/alerts-topic"]
    assert len(alerts) == 1 and "out of credits" in alerts[0].headers["Title"]


def test_a_monitor_that_never_answers_costs_at_most_ten_seconds(
    home: BotHome, listener: Listener, emulator: XEmulator
) -> None:
    _wired(home, listener)
    listener.hang.set()
    started = time.monotonic()
    emulator.fail_next("unauthorized")  # a failure: the end ping and an alert, both to a server that hangs
    status = _run(home, "--force")
    took = time.monotonic() - started
    assert status == 78 or status != 0  # the run's own exit status, unchanged
    assert took < WAIT + 3, took
    listener.release.set()


def test_a_monitor_that_never_answers_leaves_a_good_run_good(
    home: BotHome, listener: Listener, emulator: XEmulator
) -> None:
    _wired(home, listener)
    listener.hang.set()
    started = time.monotonic()
    assert _run(home, "--force") == 0
    assert time.monotonic() - started < WAIT + 3
    assert len(emulator.texts) == 1


def test_a_monitor_that_is_down_is_a_warning(home: BotHome, emulator: XEmulator, tmp_path: Path) -> None:
    closed = LoopbackServer(BaseHTTPRequestHandler)
    url = closed.url
    closed.server_close()  # nothing listens there now
    home.write_env(HEALTHCHECK_URL=f"{url}/ping/x", NOTIFY_URL=f"{url}/topic")
    assert _run(home, "--force") == 0


def test_alerts_are_sent_once_per_problem_until_settled(tmp_path: Path, listener: Listener) -> None:
    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        environ={"NOTIFY_URL": f"{listener.server.url}/t", "BOT_STATE_DIR": str(tmp_path)},
    )
    HistoryStore(config.state.history).close()
    monitor = LiveMonitor(config, "test")
    for _ in range(3):
        monitor.alert(Alert("job:pegs", "the job failed", "boom"))
    assert len(listener.heard) == 1
    assert listener.heard[0].headers["Title"] == "twitterbot: test: the job failed"
    monitor.settle(["job:pegs"])
    monitor.alert(Alert("job:pegs", "the job failed", "boom again"))
    assert [heard.body for heard in listener.heard] == ["boom", "boom again"]


@pytest.mark.parametrize("bad", ["ftp://example.com/x", "hc-ping.com/abc", "http://", "https://exa mple.com/x"])
def test_a_monitor_url_must_be_http(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="HEALTHCHECK_URL"):
        load_config(REGISTRY, project_dir=tmp_path, environ={"HEALTHCHECK_URL": bad})


def test_a_job_pings_and_alerts_when_it_goes_quiet(tmp_path: Path, listener: Listener) -> None:
    from twitterbot.networks.dryrun import DryRunPoster
    from twitterbot.progress.session import open_reporter

    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        environ={
            "HEALTHCHECK_URL": f"{listener.server.url}/ping/job",
            "NOTIFY_URL": f"{listener.server.url}/t",
            "PROGRESS_STALL": "1s",
            "BOT_STATE_DIR": str(tmp_path / "state"),
        },
    )
    posters = {config["POST_TO"][0]: DryRunPoster(networks=config["POST_TO"])}
    with pytest.raises(RuntimeError), open_reporter("quiet job", config=config, posters=posters) as report:
        report.update("started")
        time.sleep(1.6)
        raise RuntimeError("the solver crashed")
    pings = [path for path in listener.paths() if path.startswith("/ping")]
    assert pings == ["/ping/job/start", "/ping/job/1"]
    titles = [heard.headers["Title"] for heard in listener.heard if heard.path == "/t"]
    assert any("no news for" in title for title in titles), titles
    assert any("the job failed" in title for title in titles), titles


def test_watch_pings_its_command_s_own_exit_status(home: BotHome, listener: Listener, emulator: XEmulator) -> None:
    _wired(home, listener)
    assert _run(home, "watch", "--name", "sync", "--", "sh", "-c", "echo copying; exit 3") == 3
    assert _run(home, "watch", "--name", "sync", "--", "sh", "-c", "echo copied") == 0
    pings = [heard for heard in listener.heard if heard.path.startswith("/ping")]
    assert [heard.path for heard in pings] == [
        "/ping/abc-123/start",
        "/ping/abc-123/3",  # the command's exit status, which watch exits with too
        "/ping/abc-123/start",
        "/ping/abc-123",
    ]
    assert "copying" in pings[1].body  # the reason: the command's last line


def _endpoint(text: str) -> str:
    return REGISTRY.parser("HEALTHCHECK_URL")(
        "HEALTHCHECK_URL", text, ".env line 9", None, REGISTRY.settings["HEALTHCHECK_URL"]
    )


_HOSTS = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,15}[a-z0-9])?(\.[a-z]{2,6}){0,2}", fullmatch=True)
_PATHS = st.lists(st.from_regex(r"[A-Za-z0-9._~-]{1,12}", fullmatch=True), max_size=3)


@given(st.sampled_from(["http", "https"]), _HOSTS, st.one_of(st.none(), st.integers(1, 65535)), _PATHS)
def test_an_http_url_reads_back_without_its_trailing_slash(scheme: str, host: str, port, path: list) -> None:
    url = f"{scheme}://{host}{'' if port is None else f':{port}'}/{'/'.join(path)}"
    assert _endpoint(f"  {url}  ") == url.rstrip("/")


@given(st.text(max_size=60))
@example("http://")
@example("https://example.com:99999/x")
@example("https://example.com/x#frag")
@example("javascript:alert(1)")
def test_any_text_is_an_http_url_off_or_an_error_naming_the_setting(text: str) -> None:
    try:
        value = _endpoint(text)
    except ConfigError as exc:
        assert "HEALTHCHECK_URL" in str(exc) and ".env line 9" in str(exc)
        return
    assert value == "" or (value.split("://")[0] in ("http", "https") and value.isascii() and value.isprintable())
    assert " " not in value and (value == "") == (text.strip().rstrip("/") == "")


@given(st.uuids(), st.sampled_from([" x", "#top", "\t1", "é"]))
def test_a_refused_url_is_never_repeated_in_the_error(check: object, spoiler: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _endpoint(f"https://hc-ping.com/{check}{spoiler}")
    assert str(check) not in str(refused.value)  # the check's id is as good as a key to it
