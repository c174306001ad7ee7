"""Monitors that misbehave, on 127.0.0.1: a server that answers 500, a broken status line, 101
headers, a redirect to ftp:// or file:, or to this machine from the public internet; URLs that
carry a login; and a watched command that prints a monitor URL's secret parts. Whatever the
monitor does, a run keeps its own exit status, prints no traceback, logs one WARNING line naming
the setting, and sends an alert the monitor did not take again on the next run; no password or
key shows anywhere, in any encoding."""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import socketserver
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator, List, Optional, Union
from urllib.parse import quote

import pytest
from conftest import REGISTRY, BotHome
from monitor_server import BROKEN, FAILED, OK, MonitorServer, redirect
from x_emulator import XEmulator

from twitterbot.errors import ConfigError
from twitterbot.monitoring import Alert, Monitor
from twitterbot.monitoring.endpoint import parse, secret_parts
from twitterbot.monitoring.monitor import LiveMonitor
from twitterbot.monitoring.request import MAX_REDIRECTS, Call
from twitterbot.monitoring.stall import stall_watch
from twitterbot.networks.addresses import refusal
from twitterbot.settings.loading import load_config
from twitterbot.settings.secrets import Scrubber
from twitterbot.state.store import HistoryStore

# A thread's exception is printed whole to stderr, past the log's scrubbing (pytest catches it and
# warns instead): here it fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")

# A password with characters a URL must percent-encode, so the written and the sent forms differ.
PASSWORD = "p@ss/w0rd:Sesame"
USER = "alice"
CHECK = "5f0c7a52-9d3e-4b1f-8a6c-2e4d9b7f1a30"
TOPIC = "bot-alerts-7Qx2Lm"


@pytest.fixture
def hostile() -> Iterator[MonitorServer]:
    with MonitorServer() as server:
        yield server


def _login_url(hostile: MonitorServer, path: str) -> str:
    login = f"{USER}:{quote(PASSWORD, safe='')}@"
    return hostile.url.replace("://", f"://{login}") + path


def _wired(home: BotHome, hostile: MonitorServer, *, login: bool = False) -> None:
    base = _login_url(hostile, "") if login else hostile.url
    home.write_env(HEALTHCHECK_URL=f"{base}/ping/{CHECK}", NOTIFY_URL=f"{base}/{TOPIC}")


def _alerts_recorded(home: BotHome) -> List[str]:
    with HistoryStore(home.path / "state" / "history.sqlite3") as store:
        return store.open_alerts()


def _every_form(secret: str) -> List[str]:
    """The forms a leak could take: as is, percent-encoded, in base64 (standard and URL-safe)."""
    raw = secret.encode()
    return [
        secret,
        quote(secret, safe=""),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    ]


_LEAKS = [*_every_form(PASSWORD), *_every_form(f"{USER}:{PASSWORD}"), *_every_form(CHECK), TOPIC]


def _assert_no_leak(*texts: str) -> None:
    for text in texts:
        for form in _LEAKS:
            assert form not in text, f"{form!r} leaked in {text[:400]!r}"


# -- 1. an alert the monitor did not take --------------------------------------------------------


def test_an_alert_the_monitor_refused_is_sent_again_by_the_next_run(
    home: BotHome, hostile: MonitorServer, emulator: XEmulator
) -> None:
    _wired(home, hostile)
    hostile.answers_to[f"/{TOPIC}"] = [FAILED, OK]  # the first alert is refused, the next taken
    emulator.fail_next("unauthorized")
    first = home.run("--force")
    assert first.returncode not in (0, 1)
    assert len(hostile.to(f"/{TOPIC}")) == 1
    assert "NOTIFY_URL did not take the alert" in first.stderr and "500" in first.stderr
    assert "the next run sends it again" in first.stderr
    assert _alerts_recorded(home) == []  # not taken: not written down as sent

    emulator.fail_next("unauthorized")  # the same problem: the alert goes again, and is taken
    second = home.run("--force")
    assert second.returncode == first.returncode
    alerts = hostile.to(f"/{TOPIC}")
    assert len(alerts) == 2 and "refused the keys" in alerts[1].headers["title"]
    assert _alerts_recorded(home) == ["keys:x"]

    emulator.fail_next("unauthorized")  # taken once: the same problem again is quiet
    home.run("--force")
    assert len(hostile.to(f"/{TOPIC}")) == 2


def _owed(home: BotHome) -> List[str]:
    with HistoryStore(home.path / "state" / "history.sqlite3") as store:
        return store.owed_alerts()


def test_a_refused_alert_for_a_problem_a_success_settles_is_told_late_once(
    home: BotHome, hostile: MonitorServer, emulator: XEmulator
) -> None:
    """The monitor was down when the keys were refused; the keys work again by the next run. The
    owner still hears that it happened (and that it is over), once."""
    _wired(home, hostile)
    hostile.answers_to[f"/{TOPIC}"] = [FAILED, OK]
    emulator.fail_next("unauthorized")
    first = home.run("--force")
    assert first.returncode == 77 and len(hostile.to(f"/{TOPIC}")) == 1
    assert _owed(home) == ["keys:x"] and _alerts_recorded(home) == []

    second = home.run("--force")  # the post goes through: the keys' problem is settled
    assert second.returncode == 0, second.stderr
    alerts = hostile.to(f"/{TOPIC}")
    assert len(alerts) == 2
    late = alerts[1]
    assert late.headers["title"] == "twitterbot: scheduled run: over now: X refused the keys"
    assert late.headers["priority"] == "default" and late.headers["tags"] == "white_check_mark"
    body = late.body.decode()
    assert "This happened at " in body and "its alert could not be sent then" in body and "It is over now." in body
    assert body.startswith(alerts[0].body.decode() + "\n\n")  # what the refused alert said
    assert _owed(home) == [] and _alerts_recorded(home) == []

    home.run("--force")  # told: nothing more
    assert len(hostile.to(f"/{TOPIC}")) == 2


def test_a_late_alert_the_monitor_refuses_too_is_tried_at_the_next_settling(
    tmp_path: Path, hostile: MonitorServer
) -> None:
    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        environ={"NOTIFY_URL": f"{hostile.url}/{TOPIC}", "BOT_STATE_DIR": str(tmp_path)},
    )
    HistoryStore(config.state.history).close()
    monitor = LiveMonitor(config, "pegs", screen=_public_here)
    hostile.answers = [FAILED, FAILED, OK]
    assert monitor.alert(Alert("job:pegs", "the job failed", "the solver ran out of memory")) is False
    monitor.settle(["job:pegs"])  # the late alert is refused as well: still owed
    monitor.settle(["job:pegs"])  # and taken
    monitor.settle(["job:pegs"])  # nothing owed: nothing sent
    titles = [heard.headers["title"] for heard in hostile.heard]
    assert titles == ["twitterbot: pegs: the job failed"] + ["twitterbot: pegs: over now: the job failed"] * 2
    assert hostile.heard[2].body.startswith(b"the solver ran out of memory\n\nThis happened at ")
    with HistoryStore(config.state.history) as store:
        assert store.owed_alerts() == [] and store.open_alerts() == []


def test_a_refused_alert_taken_on_a_later_try_is_not_told_again_when_settled(
    tmp_path: Path, hostile: MonitorServer
) -> None:
    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        environ={"NOTIFY_URL": f"{hostile.url}/{TOPIC}", "BOT_STATE_DIR": str(tmp_path)},
    )
    HistoryStore(config.state.history).close()
    monitor = LiveMonitor(config, "test", screen=_public_here)
    hostile.answers = [FAILED, OK]
    monitor.finish(75, "X did not answer", alerts=[Alert("run", "the run failed", "X did not answer")])
    monitor.finish(75, "X did not answer", alerts=[Alert("run", "the run failed", "X did not answer")])
    monitor.finish(0, "posted", fixed=["run"])
    assert len(hostile.heard) == 2  # the refused one, the one taken; the settling tells nothing late
    with HistoryStore(config.state.history) as store:
        assert store.owed_alerts() == [] and store.open_alerts() == []


def test_a_job_that_goes_quiet_alerts_again_when_the_monitor_refused_it(tmp_path: Path, hostile: MonitorServer) -> None:
    config = load_config(
        REGISTRY,
        project_dir=tmp_path,
        environ={"NOTIFY_URL": f"{hostile.url}/{TOPIC}", "BOT_STATE_DIR": str(tmp_path)},
    )
    HistoryStore(config.state.history).close()
    monitor = LiveMonitor(config, "test", screen=_public_here)
    hostile.answers = [FAILED, OK]
    assert monitor.alert(Alert("stall:job", "no news", "quiet")) is False
    assert monitor.alert(Alert("stall:job", "no news", "quiet")) is True
    assert monitor.alert(Alert("stall:job", "no news", "quiet")) is True  # taken before: not sent
    assert len(hostile.heard) == 2


# -- 2. a URL with a login -----------------------------------------------------------------------


def test_a_login_in_the_url_is_sent_as_basic_auth_and_shown_nowhere(
    home: BotHome, hostile: MonitorServer, emulator: XEmulator
) -> None:
    _wired(home, hostile, login=True)
    emulator.fail_next("unauthorized")
    run = home.run("--force")
    assert run.returncode not in (0, 1)
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert sorted(heard.path for heard in hostile.heard) == sorted(
        [f"/ping/{CHECK}/start", f"/ping/{CHECK}/{run.returncode}", f"/{TOPIC}"]
    )
    assert all(heard.headers.get("authorization") == expected for heard in hostile.heard)
    check = home.run("check")
    assert "ok       alerts: sent to NOTIFY_URL (with its login, as HTTP Basic auth)" in check.stdout
    assert "password unencrypted" not in check.stdout  # http, but to this machine
    history = home.run("history", "--json")
    _assert_no_leak(run.stdout, run.stderr, check.stdout, check.stderr, history.stdout, history.stderr)
    _assert_no_leak(*(heard.body.decode() for heard in hostile.heard))


def test_a_login_without_a_port_neither_shows_its_password_nor_passes_for_ok(
    home: BotHome, emulator: XEmulator
) -> None:
    """The red team's URL: where urllib read "pw@127.0.0.1" as a port, and its traceback held the password."""
    home.write_env(NOTIFY_URL="http://alice:Zq9pw-secret@127.0.0.1/topic")
    emulator.fail_next("unauthorized")
    run = home.run("--force")
    assert run.returncode == 77  # the refused keys', whatever the monitor does
    assert "Traceback" not in run.stderr and "Exception in thread" not in run.stderr
    assert "Zq9pw" not in run.stdout + run.stderr and "YWxpY2U6WnE5cHctc2VjcmV0" not in run.stderr
    assert [line for line in run.stderr.splitlines() if "NOTIFY_URL did not take the alert" in line]
    check = home.run("check")
    assert "Zq9pw" not in check.stdout + check.stderr


def test_a_login_sent_in_the_clear_over_the_network_is_a_note(tmp_path: Path) -> None:
    from twitterbot.monitoring import MONITORING

    url = f"http://{USER}:{quote(PASSWORD, safe='')}@ntfy.example.org/{TOPIC}"
    lines = list(MONITORING.checks(load_config(REGISTRY, project_dir=tmp_path, environ={"NOTIFY_URL": url})))
    assert [text for status, text in lines if "unencrypted" in text and status == "note"] == [
        "NOTIFY_URL sends its password unencrypted (http:// to another machine): use https:// if the server has it"
    ]
    over_https = url.replace("http://", "https://")
    lines = list(MONITORING.checks(load_config(REGISTRY, project_dir=tmp_path, environ={"NOTIFY_URL": over_https})))
    assert not [text for _, text in lines if "unencrypted" in text]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://a%3Ab:Zq9pw@127.0.0.1/t", "user name holds a ':'"),
        ("http://alice:Zq9pw@127.0.0.1:0/t", "port is 0"),
        ("http://alice:Zq9pw@127.0.0.1:http/t", "not a URL"),
        ("http://alice:Zq9pw@exa..mple/t", "neither a host name"),
        ("http://alice:Zq9pwé@127.0.0.1/t", "non-ASCII"),
    ],
)
def test_a_url_the_bot_cannot_use_is_a_config_error_naming_the_setting(
    home: BotHome, hostile: MonitorServer, url: str, why: str
) -> None:
    home.write_env(NOTIFY_URL=url)
    for command in (["--force"], ["check"]):
        result = home.run(*command)
        assert result.returncode == 78
        assert "NOTIFY_URL" in result.stderr and why in result.stderr
        assert "Zq9pw" not in result.stderr + result.stdout and "Traceback" not in result.stderr
    assert hostile.heard == []


# -- 3. answers that are not HTTP --------------------------------------------------------------------


@pytest.mark.parametrize("answer", list(BROKEN), ids=list(BROKEN))
def test_an_answer_that_is_not_http_is_a_warning_and_the_alert_goes_next_run(
    home: BotHome, hostile: MonitorServer, emulator: XEmulator, answer: str
) -> None:
    _wired(home, hostile, login=True)
    hostile.answers = [BROKEN[answer]]
    emulator.fail_next("unauthorized")
    run = home.run("--force")
    assert run.returncode not in (0, 1)
    assert "Traceback" not in run.stderr and "Exception in thread" not in run.stderr
    warnings = [line for line in run.stderr.splitlines() if "did not take" in line]
    assert len(warnings) == 3, run.stderr  # the start ping, the end ping, the alert: one line each
    assert any(line.count("HEALTHCHECK_URL") == 1 for line in warnings)
    assert any("NOTIFY_URL" in line and "the next run sends it again" in line for line in warnings)
    assert all(len(line) < 600 and "\x1b" not in line for line in warnings)
    _assert_no_leak(run.stdout, run.stderr)
    assert _alerts_recorded(home) == []

    hostile.answers = [OK]
    emulator.fail_next("unauthorized")
    home.run("--force")
    assert _alerts_recorded(home) == ["keys:x"]


# -- 4. redirects ------------------------------------------------------------------------------------


def _public_here(address: Union[ipaddress.IPv4Address, ipaddress.IPv6Address]) -> Optional[str]:
    """127.0.0.1, where the test's monitor listens, stands for the public internet; every other
    address is judged as the link cards judge it."""
    return None if str(address) == "127.0.0.1" else refusal(address)


def _call(url: str, body: bytes = b"") -> Optional[str]:
    return Call(parse(url), body=body, seconds=5, screen=_public_here).send()


@pytest.mark.parametrize(
    "location",
    ["ftp://127.0.0.1/x", "file:///etc/passwd", "gopher://127.0.0.1:70/x", "javascript:alert(1)", "http://[::1/x"],
)
def test_a_redirect_to_anything_but_http_is_not_followed(hostile: MonitorServer, location: str) -> None:
    hostile.answers = [redirect(302, location), OK]
    problem = _call(f"{hostile.url}/{TOPIC}")
    assert problem and "redirects to a URL that is not followed" in problem
    assert len(hostile.heard) == 1


def test_a_redirect_from_the_public_internet_to_this_machine_is_not_followed(hostile: MonitorServer) -> None:
    port = hostile.port
    for private in (f"http://127.0.0.2:{port}/x", f"http://[::1]:{port}/x", "http://169.254.169.254/latest/meta-data/"):
        hostile.heard.clear()
        hostile.answers = [redirect(307, private), OK]
        problem = _call(f"{hostile.url}/{TOPIC}", b"alert")
        assert problem and "from the public internet" in problem and "not followed" in problem
        assert len(hostile.heard) == 1


def test_a_monitor_on_this_machine_may_redirect_on_this_machine(hostile: MonitorServer) -> None:
    hostile.answers = [redirect(308, lambda url: f"{url}/{TOPIC}/moved"), OK]
    assert Call(parse(f"{hostile.url}/{TOPIC}"), body=b"alert", seconds=5).send() is None
    assert [(heard.method, heard.path, heard.body) for heard in hostile.heard] == [
        ("POST", f"/{TOPIC}", b"alert"),
        ("POST", f"/{TOPIC}/moved", b"alert"),  # 307 and 308 keep the method and the body
    ]


def test_redirects_are_followed_a_few_times_only(hostile: MonitorServer) -> None:
    hostile.answers = [redirect(302, "/again")]
    problem = _call(f"{hostile.url}/{TOPIC}")
    assert problem == f"it redirects more than {MAX_REDIRECTS} times"
    assert len(hostile.heard) == MAX_REDIRECTS + 1


def test_the_login_goes_to_the_monitor_s_own_origin_only(hostile: MonitorServer) -> None:
    other = MonitorServer()
    try:
        hostile.answers = [redirect(307, lambda url: f"{url}/same"), redirect(307, f"{other.url}/elsewhere"), OK]
        assert _call(_login_url(hostile, f"/{TOPIC}"), b"alert") is None
        assert [heard.headers.get("authorization", "") for heard in hostile.heard] != ["", ""]
        assert all(heard.headers.get("authorization") for heard in hostile.heard)
        assert [heard.path for heard in other.heard] == ["/elsewhere"]
        assert "authorization" not in other.heard[0].headers
    finally:
        other.stop()


def test_a_redirect_to_a_login_of_its_own_does_not_send_it(hostile: MonitorServer) -> None:
    port = hostile.port
    hostile.answers = [redirect(302, f"http://mallory:stolen@127.0.0.1:{port}/x"), OK]
    assert _call(f"{hostile.url}/{TOPIC}") is None
    assert "authorization" not in hostile.heard[1].headers


# -- 5. a watched command that prints a secret part -----------------------------------------------


@pytest.mark.parametrize(
    "printed",
    [
        PASSWORD,
        quote(PASSWORD, safe=""),
        base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode(),
        f"Authorization: Basic {base64.b64encode(f'{USER}:{PASSWORD}'.encode()).decode()}",
        CHECK,
        f"uuid={CHECK.upper()}",
        TOPIC,
        f"token=ab{base64.b64encode(PASSWORD.encode()).decode()}cd",
    ],
)
def test_a_watched_command_that_prints_a_secret_part_has_it_masked(
    home: BotHome, hostile: MonitorServer, emulator: XEmulator, printed: str
) -> None:
    _wired(home, hostile, login=True)
    result = home.run("watch", "--name", "sync", "--", "sh", "-c", f"echo 'the key: {printed}'; exit 3")
    assert result.returncode == 3
    assert emulator.texts and "the key: " in emulator.texts[-1] and "********" in emulator.texts[-1]
    pings = hostile.to(f"/ping/{CHECK}/3")
    assert pings and b"********" in pings[0].body
    _assert_no_leak(*emulator.texts, *(heard.body.decode() for heard in hostile.heard), result.stderr)


def test_the_secret_parts_of_a_monitor_url() -> None:
    url = f"https://{USER}:{quote(PASSWORD, safe='')}@hc.example.org/ping/{CHECK}?rid=run-Ab12Cd34&create=1"
    parts = secret_parts(url)
    assert PASSWORD in parts and quote(PASSWORD, safe="") in parts and f"{USER}:{PASSWORD}" in parts
    assert CHECK in parts and "run-Ab12Cd34" in parts
    assert USER not in parts and "ping" not in parts and "hc.example.org" not in parts and "1" not in parts
    config = load_config(REGISTRY, project_dir=Path("/nowhere"), environ={"HEALTHCHECK_URL": url})
    mask = Scrubber(config.secrets())
    for text in _every_form(PASSWORD) + _every_form(CHECK):
        assert mask(f"said {text}.") == "said ********."


def test_a_short_ntfy_topic_is_an_ordinary_word_not_a_secret() -> None:
    assert secret_parts("https://ntfy.sh/alerts") == ()


def test_a_config_error_elsewhere_does_not_show_a_monitor_s_password(tmp_path: Path) -> None:
    url = f"https://{USER}:{quote(PASSWORD, safe='')}@ntfy.example.org/{TOPIC}"
    with pytest.raises(ConfigError) as refused:
        load_config(REGISTRY, project_dir=tmp_path, environ={"NOTIFY_URL": url, "TWEET_ONE_IN": PASSWORD})
    _assert_no_leak(str(refused.value))


def test_a_monitor_that_drips_its_answer_is_given_up_at_the_time_limit() -> None:
    stop = threading.Event()

    class Drip(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            self.rfile.readline()
            with contextlib.suppress(OSError):
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                while not stop.wait(0.2):  # a header a byte at a time: each read comes in time
                    self.wfile.write(b"X")
                    self.wfile.flush()

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Drip)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        started = time.monotonic()
        problem = Call(parse(f"http://127.0.0.1:{server.server_address[1]}/t"), seconds=1).send()
        assert problem == "no answer within 1 s"
        assert time.monotonic() - started < 5  # a generous bound: without one, the call never ends
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def test_a_stall_alert_the_monitor_did_not_take_is_tried_again_until_taken() -> None:
    class Refusing(Monitor):
        """Takes the third alert, as a monitor that was down for a while."""

        def __init__(self) -> None:
            self.tries: List[str] = []
            self.taken = threading.Event()

        def alert(self, alert: Alert) -> bool:
            self.tries.append(alert.problem)
            if len(self.tries) == 3:
                self.taken.set()
            return len(self.tries) >= 3

    monitor = Refusing()
    long_ago = datetime.now(timezone.utc) - timedelta(hours=1)
    with stall_watch(monitor, "quiet", heard=lambda: long_ago, stall=0.2):
        assert monitor.taken.wait(10)
        time.sleep(0.3)  # ticks after it was taken: no more tries
    assert monitor.tries == ["stall:quiet"] * 3


def test_a_ping_s_suffix_goes_before_the_query() -> None:
    endpoint = parse(f"https://hc-ping.com/{CHECK}?rid=run-1")
    assert endpoint.with_suffix("/start").target == f"/{CHECK}/start?rid=run-1"
    assert endpoint.with_suffix("/75").address == f"https://hc-ping.com/{CHECK}/75?rid=run-1"
