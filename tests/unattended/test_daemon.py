"""The daemon: DST-correct waits, no catch-up burst, jitter, sd_notify, and a real process."""

from __future__ import annotations

import logging
import math
import random
import signal
import socket
import threading
import time
import zoneinfo
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import A_DAEMON_OF_THIS_CHECKOUT, SAMPLE_TWEETS, BotHome
from faked_clock import require_libfaketime, sped_up
from x_emulator import XEmulator

from twitterbot.state.clock import zone_for
from twitterbot.unattended.daemon import MAX_NAP, Daemon, SignalTwins, sd_notify, seconds_until

pytestmark = A_DAEMON_OF_THIS_CHECKOUT  # they start `bot.py daemon`

LONDON = zoneinfo.ZoneInfo("Europe/London")
HOUR = 3600


@pytest.mark.parametrize(
    ("now", "next_run", "hours"),
    [
        # Clocks go forward at 01:00 GMT on 28 March 2027: 23:00 -> 06:00 is 6 real hours, not 7.
        (datetime(2027, 3, 27, 23, 0, tzinfo=LONDON), datetime(2027, 3, 28, 6, 0), 6),
        # Clocks go back at 02:00 BST on 31 October 2027: 23:00 -> 06:00 is 8 real hours.
        (datetime(2027, 10, 30, 23, 0, tzinfo=LONDON), datetime(2027, 10, 31, 6, 0), 8),
        # An ordinary night.
        (datetime(2027, 1, 10, 23, 0, tzinfo=LONDON), datetime(2027, 1, 11, 6, 0), 7),
        # A time in the skipped hour comes with the old offset: 01:30 GMT is 02:30 BST.
        (datetime(2027, 3, 28, 0, 0, tzinfo=LONDON), datetime(2027, 3, 28, 1, 30), 1.5),
        # A time that happens twice means the first one.
        (datetime(2027, 10, 31, 0, 0, tzinfo=LONDON), datetime(2027, 10, 31, 1, 30), 1.5),
    ],
)
def test_waits_are_real_seconds_across_dst(now: datetime, next_run: datetime, hours: float) -> None:
    assert seconds_until(next_run, now, LONDON) == hours * HOUR


def test_the_zone_is_the_configured_one_else_tz_else_the_systems() -> None:
    assert zone_for("Asia/Tokyo") == zoneinfo.ZoneInfo("Asia/Tokyo")
    assert zone_for(None, environ={"TZ": ":America/New_York"}) == zoneinfo.ZoneInfo("America/New_York")
    assert zone_for(None, environ={}).utcoffset(datetime(2027, 1, 1)) is not None


class FakeStop:
    """A stop event whose waits return at once, recording how long they were asked to be."""

    def __init__(self) -> None:
        self.waits: list = []
        self.flag = False

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        return self.flag

    def is_set(self) -> bool:
        return self.flag

    def set(self) -> None:
        self.flag = True

    def clear(self) -> None:
        self.flag = False


def local_daemon(ran: list, **options) -> Daemon:
    """A daemon in this process's own zone, as schedule's naive local times require."""
    zone = zone_for(None)
    return Daemon.build(
        ["06:00", "12:00", "18:00"],
        run_slot=ran.append,
        zone=zone,
        clock=lambda: datetime.now(zone),
        notify=lambda message: None,
        **options,
    )


def test_after_a_suspend_missed_runs_are_skipped_not_fired_in_a_burst_and_said_in_one_line(caplog) -> None:
    ran: list = []
    daemon = local_daemon(ran)
    naive_now = datetime.now()
    for hours_ago, job in zip((9, 6, 3), daemon.scheduler.jobs):
        job.next_run = naive_now - timedelta(hours=hours_ago)  # the machine slept through all three
    with caplog.at_level(logging.WARNING):
        daemon.run_due()
    assert ran == []
    assert [record.getMessage() for record in caplog.records] == [
        "missed 3 runs, 06:00 to 18:00, by up to 9h (the machine was asleep or its clock jumped): not catching up"
    ]
    assert all(job.next_run > naive_now for job in daemon.scheduler.jobs)  # rescheduled, not lost


def test_one_missed_run_is_named(caplog) -> None:
    ran: list = []
    daemon = local_daemon(ran)
    daemon.scheduler.jobs[1].next_run = datetime.now() - timedelta(minutes=40)
    with caplog.at_level(logging.WARNING):
        daemon.run_due()
    assert ran == [] and caplog.messages == [
        "missed the 12:00 run by 40m (the machine was asleep or its clock jumped): not catching up"
    ]


def test_a_run_only_a_little_late_still_happens() -> None:
    ran: list = []
    daemon = local_daemon(ran)
    daemon.scheduler.jobs[1].next_run = datetime.now() - timedelta(minutes=2)
    daemon.scheduler.run_pending()
    assert ran == ["12:00"]


def test_jitter_waits_a_random_time_within_bounds(caplog: pytest.LogCaptureFixture) -> None:
    ran: list = []
    stop = FakeStop()
    daemon = local_daemon(ran, jitter=600.0, rng=random.Random(3), stop=stop)
    job = daemon.scheduler.jobs[0]
    with caplog.at_level(logging.INFO):
        for _ in range(200):
            job.next_run = datetime.now()
            daemon._fire("06:00", job)
    assert "waiting a random" not in caplog.text  # the daemon's log keeps one line a run
    assert len(ran) == 200
    assert all(0 <= wait <= 600 for wait in stop.waits) and len(set(stop.waits)) == 200
    assert max(stop.waits) > 500 and min(stop.waits) < 100


def test_the_loop_naps_at_most_a_minute_and_stops_on_request() -> None:
    wake = FakeStop()
    messages: list = []
    zone = zone_for(None)
    daemon = Daemon.build(
        ["00:00"], run_slot=print, zone=zone, clock=lambda: datetime.now(zone), notify=messages.append, wake=wake
    )
    original = wake.wait

    def wait_then_stop(timeout: float) -> bool:
        original(timeout)
        daemon.request_stop()
        return True

    wake.wait = wait_then_stop
    daemon.serve()
    assert 0 < wake.waits[0] <= MAX_NAP
    assert messages[0] == "READY=1" and messages[1].startswith("STATUS=next run at") and messages[-1] == "STOPPING=1"


def test_a_stop_signal_is_logged_by_the_loop_not_by_the_signal_handler(caplog) -> None:
    # A handler that logs can interrupt a log line being written: a reentrant write to stderr.
    daemon = Daemon.build(["00:00"], run_slot=print, zone=zone_for(None), notify=lambda message: None)
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        daemon.install_signal_handlers()
        with caplog.at_level(logging.INFO, logger="twitterbot"):
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
            assert daemon.stop.wait(5) and caplog.records == []  # set by the relay thread
            daemon.serve()
    finally:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGTERM, before[0])
        signal.signal(signal.SIGINT, before[1])
    assert "received SIGTERM: stopping" in caplog.text


def test_a_stop_signal_taken_by_another_thread_stops_at_once() -> None:
    """The kernel may hand SIGTERM to any thread; Python runs its handler in the main thread only
    when that thread next runs bytecode. The stop must not wait for the main thread's nap."""
    daemon = Daemon.build(["00:00"], run_slot=print, zone=zone_for(None), notify=lambda message: None)
    before = [signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)]
    other = threading.Thread(target=time.sleep, args=(3,), name="another thread")
    try:
        daemon.install_signal_handlers()
        other.start()
        signal.pthread_kill(other.ident, signal.SIGTERM)
        started = time.monotonic()
        assert daemon.stop.wait(10)  # the main thread is blocked here, in a lock, meanwhile
        assert time.monotonic() - started < 2 and daemon.stopped_by == "SIGTERM"
    finally:
        signal.set_wakeup_fd(-1)
        for signum, handler in zip((signal.SIGTERM, signal.SIGINT, signal.SIGHUP), before):
            signal.signal(signum, handler)
        other.join()


HUP, TERM = signal.SIGHUP.value, signal.SIGTERM.value
BY_HANDLER = SignalTwins.BY_HANDLER


@pytest.mark.parametrize(
    ("written", "acted_on"),
    [
        ([HUP, HUP | BY_HANDLER], [HUP]),  # the wakeup fd first, then the handler: one reload
        ([HUP | BY_HANDLER, HUP], [HUP]),  # the handler first (the C handler wakes, then writes)
        ([HUP, HUP, HUP | BY_HANDLER, HUP | BY_HANDLER], [HUP, HUP]),  # two SIGHUPs, two reloads
        ([HUP | BY_HANDLER, HUP | BY_HANDLER], [HUP, HUP]),  # a library took the wakeup fd
        ([HUP, TERM, TERM | BY_HANDLER, HUP | BY_HANDLER], [HUP, TERM]),
    ],
)
def test_each_signal_is_acted_on_once_though_written_twice(written: list, acted_on: list) -> None:
    twins = SignalTwins()
    assert [number for number in map(twins.first_of, written) if number is not None] == acted_on


def test_serve_ends_within_a_second_of_stop() -> None:
    zone = zone_for(None)
    daemon = Daemon.build(["00:00"], run_slot=print, zone=zone, notify=lambda message: None)
    thread = threading.Thread(target=daemon.serve)
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    daemon.request_stop()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - started < 1


@pytest.mark.parametrize("abstract", [False, True])
def test_sd_notify_speaks_systemds_protocol(tmp_path: Path, abstract: bool) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        if abstract:
            name = f"twitterbot-test-{time.monotonic_ns()}"
            listener.bind("\0" + name)
            address = "@" + name
        else:
            address = str(tmp_path / "notify")
            listener.bind(address)
        assert sd_notify("READY=1", environ={"NOTIFY_SOCKET": address})
        assert listener.recv(100) == b"READY=1"
    assert not sd_notify("READY=1", environ={})


# -- the real process ----------------------------------------------------------------------------


def times_from_now(*seconds: int) -> str:
    now = datetime.now(timezone.utc)
    return ",".join((now + timedelta(seconds=offset)).strftime("%H:%M:%S") for offset in seconds)


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_daemon_posts_at_its_time_keeps_going_after_a_failure_and_stops_on_sigterm(
    home: BotHome, emulator: XEmulator, tmp_path: Path
) -> None:
    home.write_env(TWEET_TIMES=times_from_now(4, 7), TWEET_TIMEZONE="UTC")
    emulator.fail_next("server_error")  # the first run fails (no retries in tests), the second posts
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(tmp_path / "notify"))
        notify.settimeout(20)
        process = home.start("daemon", env={"NOTIFY_SOCKET": str(tmp_path / "notify")})
        try:
            assert notify.recv(100) == b"READY=1"
            assert wait_for(lambda: len(emulator.posts) == 1, 20), "the daemon did not post"
            time.sleep(0.3)
            stopped_at = time.monotonic()
            process.send_signal(signal.SIGTERM)
            process.wait(30)  # an upper bound: a loaded CI machine is slow to start and stop Python
            took = time.monotonic() - stopped_at
        finally:
            process.kill()
        stdout, stderr = process.communicate()
    assert process.returncode == 0, stderr
    assert took < 1.5
    assert "server error" in stderr and "posted line" in stderr and "daemon stopped" in stderr
    assert [seen.status for seen in emulator.seen] == [503, 201]


def test_the_daemon_answers_mentions_before_each_run_s_roll(home: BotHome, emulator: XEmulator) -> None:
    (home.path / "replies.json").write_text('{"hello": "hi there!"}', encoding="utf-8")
    home.write_env(
        TWEET_TIMES=times_from_now(3),
        TWEET_TIMEZONE="UTC",
        TWEET_ONE_IN="1",
        MIN_POST_GAP="0",
        REPLY_RULES=str(home.path / "replies.json"),
    )
    asked = emulator.mention("@pi_bot hello", by="ada", ago=60)
    process = home.start("daemon")
    try:
        assert wait_for(lambda: len(emulator.posts) == 2, 30), "the daemon did not answer and post"
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    finally:
        process.kill()
    _, stderr = process.communicate()
    assert [(post.text, post.reply_to) for post in emulator.posts][0] == ("@ada hi there!", asked.id), stderr
    assert emulator.posts[1].reply_to is None and "posted line" in stderr


def test_the_daemon_dry_run_posts_nothing(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(TWEET_TIMES=times_from_now(3), TWEET_TIMEZONE="UTC")
    process = home.start("daemon", "--dry-run")
    try:
        assert wait_for(lambda: (home.path / "state" / "history.sqlite3").exists(), 20)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        process.wait(30)  # an upper bound: a loaded CI machine is slow to start and stop Python
    finally:
        process.kill()
    _, stderr = process.communicate()
    assert process.returncode == 0 and "dry run: would post" in stderr
    assert emulator.seen == []


def test_the_daemon_refuses_to_start_without_keys(home: BotHome) -> None:
    home.settings.pop("TWITTER_API_KEY")
    home.write_env()
    result = home.run("daemon", timeout=30)
    assert result.returncode == 78 and "TWITTER_API_KEY not set" in result.stderr


def receive_until(notify: socket.socket, wanted: bytes) -> bool:
    """Read sd_notify messages until `wanted` (True) or the socket's timeout (an exception)."""
    while notify.recv(100) != wanted:
        pass
    return True


def history_rows(home: BotHome) -> list:
    import sqlite3

    with sqlite3.connect(home.path / "state" / "history.sqlite3") as conn:
        rows = conn.execute("SELECT text, outcome FROM attempts ORDER BY id").fetchall()
    conn.close()
    return rows


def test_sighup_rereads_the_env_file_and_the_tweets_file_and_carries_on(
    home: BotHome, emulator: XEmulator, tmp_path: Path
) -> None:
    home.write_env(TWEET_TIMES=times_from_now(3 * HOUR), TWEET_TIMEZONE="UTC", MAX_POSTS_PER_DAY="4")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(tmp_path / "notify"))
        notify.settimeout(60)
        process = home.start("daemon", env={"NOTIFY_SOCKET": str(tmp_path / "notify")})
        try:
            assert notify.recv(100) == b"READY=1"
            home.write_tweets("A line added while it ran\n")
            home.write_env(TWEET_TIMES=times_from_now(4), MAX_POSTS_PER_DAY="3")
            process.send_signal(signal.SIGHUP)
            assert receive_until(notify, b"RELOADING=1") and receive_until(notify, b"READY=1")
            assert wait_for(lambda: len(emulator.posts) == 1, 20), "the daemon did not post at the new time"
            process.send_signal(signal.SIGTERM)
            process.wait(30)  # an upper bound: a loaded CI machine is slow to start and stop Python
        finally:
            process.kill()
        _, stderr = process.communicate()
    assert process.returncode == 0, stderr
    assert emulator.texts == ["A line added while it ran"]
    # The reload is one line in the journal: what changed, the tweets file, the next run.
    (reload_line,) = [line for line in stderr.splitlines() if "SIGHUP" in line or "ready to post" in line]
    assert "received SIGHUP: reloaded" in reload_line and "MAX_POSTS_PER_DAY 4 -> 3" in reload_line
    assert "TWEET_TIMES" in reload_line and "1 line ready to post" in reload_line and "next run at" in reload_line
    assert "daemon stopped" in stderr


def test_sighup_while_posting_finishes_the_post_and_leaves_nothing_pending(
    home: BotHome, emulator: XEmulator, tmp_path: Path
) -> None:
    home.write_env(TWEET_TIMES=times_from_now(3), TWEET_TIMEZONE="UTC")
    emulator.slow_seconds = 1.5
    emulator.fail_next("slow")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(tmp_path / "notify"))
        notify.settimeout(60)
        process = home.start("daemon", env={"NOTIFY_SOCKET": str(tmp_path / "notify")})
        try:
            assert emulator.received.wait(60), "the daemon did not post"
            process.send_signal(signal.SIGHUP)  # X has the request and has not answered yet
            assert wait_for(lambda: len(emulator.posts) == 1, 20)
            assert wait_for(lambda: [outcome for _, outcome in history_rows(home)] == ["posted"], 10)
            # The reload comes after the run, between runs: wait for it before stopping the daemon.
            assert receive_until(notify, b"RELOADING=1")
            assert receive_until(notify, b"READY=1")
            assert process.poll() is None, "SIGHUP killed the daemon"
            process.send_signal(signal.SIGTERM)
            process.wait(30)  # an upper bound: a loaded CI machine is slow to start and stop Python
        finally:
            process.kill()
        _, stderr = process.communicate()
    assert process.returncode == 0, stderr
    assert "posted line" in stderr and "reloaded" in stderr


def test_a_bad_env_file_on_sighup_keeps_the_settings_in_use(home: BotHome, emulator: XEmulator, tmp_path: Path) -> None:
    home.write_env(TWEET_TIMES=times_from_now(3 * HOUR), TWEET_TIMEZONE="UTC")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(tmp_path / "notify"))
        notify.settimeout(60)
        process = home.start("daemon", env={"NOTIFY_SOCKET": str(tmp_path / "notify")})
        try:
            assert notify.recv(100) == b"READY=1"
            home.write_env(TWEET_ONE_IN="zero")
            process.send_signal(signal.SIGHUP)
            assert receive_until(notify, b"RELOADING=1")
            assert receive_until(notify, b"READY=1")  # the reload failed, and the daemon carries on
            assert process.poll() is None, "a bad env file on reload stopped the daemon"
            process.send_signal(signal.SIGTERM)
            process.wait(30)  # an upper bound: a loaded CI machine is slow to start and stop Python
        finally:
            process.kill()
        _, stderr = process.communicate()
    assert process.returncode == 0, stderr
    assert "TWEET_ONE_IN" in stderr and "carrying on with the settings in use" in stderr


def test_reloads_add_no_second_log_handler(home: BotHome, tmp_path: Path) -> None:
    """LOG_FILE is opened once, at the start: a reload (which may not move it) adds no handler, so
    no line is written twice, to the file or to the journal."""
    log_file = tmp_path / "bot.log"
    home.write_env(TWEET_TIMES=times_from_now(3 * HOUR), TWEET_TIMEZONE="UTC", LOG_FILE=str(log_file))
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(tmp_path / "notify"))
        notify.settimeout(60)
        process = home.start("daemon", "--dry-run", env={"NOTIFY_SOCKET": str(tmp_path / "notify")})
        try:
            assert notify.recv(100) == b"READY=1"
            for _ in range(2):
                process.send_signal(signal.SIGHUP)
                assert receive_until(notify, b"RELOADING=1") and receive_until(notify, b"READY=1")
            process.send_signal(signal.SIGTERM)
            process.wait(30)  # an upper bound: a loaded CI machine is slow to start and stop Python
        finally:
            process.kill()
        _, stderr = process.communicate()
    assert process.returncode == 0, stderr
    for lines in (log_file.read_text().splitlines(), stderr.splitlines()):
        assert len(lines) == 6, lines  # started, the next run, two reloads, the signal, stopped
        assert sum("received SIGHUP: reloaded" in line for line in lines) == 2


def test_a_reload_that_changes_post_to_names_the_networks(tmp_path: Path) -> None:
    """POST_TO's value is the networks themselves: the reload's log names them as POST_TO does."""
    from conftest import REGISTRY

    from twitterbot.settings.loading import load_config
    from twitterbot.unattended.commands import _changed_settings

    old = load_config(REGISTRY, project_dir=tmp_path, environ={"POST_TO": "x"})
    new = load_config(REGISTRY, project_dir=tmp_path, environ={"POST_TO": "x,bluesky", "TWEET_ONE_IN": "2"})
    assert _changed_settings(old, new) == ["POST_TO x -> x,bluesky", "TWEET_ONE_IN 4 -> 2"]


# -- one-off lines ({at: ...}) -------------------------------------------------------------------


def test_the_daemon_naps_until_the_next_one_off_line_and_runs_once_for_it() -> None:
    zone = zone_for(None)
    now = datetime.now(timezone.utc)
    soon, later = now + timedelta(seconds=40), now + timedelta(hours=2)
    clock = {"now": now}
    ran: list = []
    wake = FakeStop()
    daemon = Daemon.build(
        ["00:00"], run_slot=ran.append, zone=zone, clock=lambda: clock["now"], notify=lambda message: None, wake=wake
    )
    daemon.line_times = lambda after: next((at for at in (soon, later) if after is None or at > after), None)
    daemon.woke_for = now - timedelta(hours=1)
    original = wake.wait

    def nap(timeout: float) -> bool:
        original(timeout)
        clock["now"] += timedelta(seconds=timeout)
        if len(wake.waits) == 3:
            daemon.request_stop()
        return False

    wake.wait = nap
    daemon.serve()
    assert wake.waits[0] == pytest.approx(40)  # it woke for the line, not a minute later
    assert ran == [f"{soon.astimezone(zone):%Y-%m-%d %H:%M} one-off"]  # once: the next is two hours off
    assert daemon.woke_for == soon


def test_a_clock_jump_past_thirty_one_offs_makes_one_one_off_run() -> None:
    zone = zone_for(None)
    now = datetime.now(timezone.utc)
    times = [now + timedelta(minutes=minute) for minute in range(1, 31)]
    clock = {"now": now}
    plain: list = []
    lines: list = []
    daemon = Daemon.build(["00:00"], run_slot=plain.append, zone=zone, clock=lambda: clock["now"])
    daemon.line_times = lambda after: next((at for at in times if after is None or at > after), None)
    daemon.run_line = lines.append
    daemon.woke_for = now
    clock["now"] = now + timedelta(hours=1)  # NTP set the clock an hour on: every one-off time passed
    assert daemon._line_wait() == 0.0
    assert daemon._line_wait() == math.inf  # nothing left to wake for
    assert lines == [f"{times[-1].astimezone(zone):%Y-%m-%d %H:%M} one-off"] and plain == []
    assert daemon.woke_for == times[-1]


def test_a_daemon_started_past_thirty_one_offs_posts_one_of_them_and_no_plain_line(
    home: BotHome, emulator: XEmulator
) -> None:
    now = datetime.now(timezone.utc)
    home.write_env(TWEET_TIMES=times_from_now(6 * 3600), TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1", MIN_POST_GAP="0")
    one_offs = [
        f"{{at: {now - timedelta(minutes=minute):%Y-%m-%d %H:%M}}} One-off {minute}" for minute in range(50, 20, -1)
    ]
    home.write_tweets("\n".join(one_offs) + "\nplain line\nanother plain line\n")
    process = home.start("daemon")
    try:
        assert wait_for(lambda: len(emulator.posts) >= 1, 20), "the daemon posted nothing"
        time.sleep(2)
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    finally:
        process.kill()
    _, stderr = process.communicate()
    assert emulator.texts == ["One-off 50"], stderr  # the oldest due; one run, no plain post
    assert "30 one-off times passed at once" in stderr


def test_a_daemon_started_within_late_by_of_a_one_off_posts_it_at_once(home: BotHome, emulator: XEmulator) -> None:
    now = datetime.now(timezone.utc)
    home.write_env(TWEET_TIMES=times_from_now(6 * 3600), TWEET_TIMEZONE="UTC", TWEET_ONE_IN="1000000")
    home.write_tweets(f"{{at: {now - timedelta(minutes=20):%Y-%m-%d %H:%M}}} Twenty minutes late\nplain line\n")
    process = home.start("daemon")
    try:
        assert wait_for(lambda: len(emulator.posts) == 1, 20), "the daemon did not post the one-off line"
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    finally:
        process.kill()
    _, stderr = process.communicate()
    assert emulator.texts == ["Twenty minutes late"], stderr


EVERY_TEN_MINUTES = ",".join(f"{hour:02d}:{minute:02d}" for hour in range(24) for minute in range(0, 60, 10))


def test_under_a_clock_sped_up_720_times_the_daemon_runs_at_every_time(home: BotHome, tmp_path: Path) -> None:
    """Two simulated hours in about ten real seconds: a run at each of the twelve ten-minute marks,
    none missed, each leaving one line, and the tweets file's bad line said once, not every run.
    The naps must be waits the faked clock speeds up: a nap libfaketime does not scale lasts a
    real minute, twelve faked hours, and misses 72 runs."""
    runs = 12
    home.write_env(TWEET_TIMES=EVERY_TEN_MINUTES, TWEET_TIMEZONE="UTC")
    home.write_tweets(SAMPLE_TWEETS + "x" * 300 + "\n")  # line 4: too long for X, a warning at each run
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(tmp_path / "notify"))
        notify.settimeout(30)  # a generous bound on 1.25 real seconds (15 faked minutes)
        env = {"NOTIFY_SOCKET": str(tmp_path / "notify"), **sped_up(720, require_libfaketime())}
        process = home.start("daemon", "--dry-run", env=env)
        try:
            announced: list = []  # each "next run at", from the start and after each run
            while len(announced) <= runs:
                try:
                    message = notify.recv(200).decode()
                except socket.timeout:
                    pytest.fail(
                        f"after the runs due at {announced} the daemon slept 30 real seconds: its nap is not sped up"
                    )
                if message.startswith("STATUS=next run at "):
                    announced.append(datetime.strptime(message.split(" at ", 1)[1], "%Y-%m-%d %H:%M:%S"))
            process.send_signal(signal.SIGTERM)
            process.wait(30)  # an upper bound: a loaded CI machine is slow to start and stop Python
        finally:
            process.kill()
        _, stderr = process.communicate()
    assert process.returncode == 0, stderr
    assert announced == [announced[0] + timedelta(minutes=10 * step) for step in range(runs + 1)], stderr
    assert "missed" not in stderr
    done = stderr.count("dry run: would post")
    assert done in (runs, runs + 1), stderr  # one more if the 13th came due before SIGTERM did
    # The journal's view: started, the first next run, line 4 once, one line a run, the signal, stopped.
    assert stderr.count("tweets.txt line 4 is too long") == 1, stderr
    assert len(stderr.splitlines()) == done + 5, stderr
