"""The Bluesky poster's rules and its answers to faults the real PDS cannot be made to produce
(through tests/bluesky_emulator.py): lost replies, 5xx, 429, dropped connections, expired sessions."""

from __future__ import annotations

import json
import logging
import re
import socket
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, List

import pytest
from bluesky_emulator import BlueskyEmulator, Fault

from twitterbot.errors import ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.bluesky.records import PostRef, new_record_key
from twitterbot.networks.bluesky.text import measure
from twitterbot.settings.secrets import ScrubSecrets

REPO = Path(__file__).resolve().parents[2]
CREATE = "com.atproto.repo.createRecord"


@pytest.fixture
def emulator() -> Any:
    with BlueskyEmulator() as emu:
        yield emu


def poster_for(emu: BlueskyEmulator, session_file: Path, **options: Any) -> BlueskyPoster:
    settings = {"timeout": 2.0, "retries": 2, "sleep": lambda seconds: None}
    settings.update(options)
    return BlueskyPoster(Login(emu.handle, emu.password, emu.url, session_file), **settings)


def test_a_login_keeps_its_app_password_out_of_repr() -> None:
    login = Login("alice.test", "abcd-efgh-ijkl-mnop", "https://bsky.social", Path("session.json"))
    assert "abcd-efgh-ijkl-mnop" not in repr(login) and "alice.test" in repr(login)


# -- the length rule ----------------------------------------------------------------------------


def test_measure_counts_graphemes_and_names_the_byte_rule_when_that_one_fails() -> None:
    fit = measure("Hi 👋🏽 from my Pi")
    assert (fit.network, fit.length, fit.limit, fit.unit, fit.fits) == ("bluesky", 15, 300, "graphemes", True)
    assert measure("x" * 300).fits and not measure("x" * 301).fits
    too_big = measure("👨‍👩‍👧" * 167)
    assert too_big.length == 167 and not too_big.fits
    assert too_big.reason == "3,006 bytes in UTF-8, over Bluesky's 3,000-byte limit"


def test_measuring_and_importing_the_module_never_load_the_sdk() -> None:
    code = (
        "import sys; from twitterbot.networks.bluesky.text import measure; measure('hi #tag'); "
        "loaded = sorted(m for m in sys.modules if m.split('.')[0].startswith(('atproto', 'httpx', 'pydantic')));"
        "print(loaded)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_record_keys_are_tids_that_sort_by_time_and_never_repeat() -> None:
    keys = [new_record_key() for _ in range(200)]
    assert all(re.fullmatch(r"[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}", key) for key in keys)
    assert len(set(keys)) == 200
    assert new_record_key(now=1_000, clock_id=0) < new_record_key(now=1_001, clock_id=0)
    assert new_record_key(now=1_700_000_000.0, clock_id=1) == new_record_key(now=1_700_000_000.0, clock_id=1)


def test_a_reply_reference_that_is_not_bluesky_is_a_data_error(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    with pytest.raises(PostError) as refused:
        poster_for(emulator, tmp_path / "s.json").post("hi", PostOptions(reply_to="1456012973835788293"))
    assert (refused.value.kind, refused.value.exit_status) == ("bad_reply_to", ExitStatus.DATA_ERROR)
    assert emulator.calls[CREATE] == 0


# -- faults -------------------------------------------------------------------------------------


def test_a_reply_lost_after_the_record_was_written_is_found_by_its_key(
    emulator: BlueskyEmulator, tmp_path: Path
) -> None:
    emulator.fail(CREATE, Fault.lose_reply())
    result = poster_for(emulator, tmp_path / "s.json").post("once")
    assert result.confirmed
    (record,) = emulator.posts()
    assert PostRef.decode(result.post_id).uri == record["uri"]
    assert emulator.calls[CREATE] == 1


def test_a_server_error_is_retried_with_the_same_record_key(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    delays: List[float] = []
    emulator.fail(CREATE, Fault.server_error(503))
    result = poster_for(emulator, tmp_path / "s.json", sleep=delays.append, backoff=3.0).post("after a 503")
    assert result.confirmed and len(emulator.posts()) == 1
    assert delays == [3.0]


def test_server_errors_on_every_try_fail_temporarily_and_post_nothing(
    emulator: BlueskyEmulator, tmp_path: Path
) -> None:
    emulator.fail(CREATE, *[Fault.server_error(502)] * 3)
    with pytest.raises(PostError) as failed:
        poster_for(emulator, tmp_path / "s.json").post("never")
    assert (failed.value.kind, failed.value.exit_status) == ("server_error", ExitStatus.TEMPORARY_FAILURE)
    assert "502" in str(failed.value) and "next run" in str(failed.value)
    assert emulator.calls[CREATE] == 3 and emulator.posts() == []


def test_a_rate_limit_says_when_posting_works_again_and_is_not_retried(
    emulator: BlueskyEmulator, tmp_path: Path
) -> None:
    reset = 1_900_000_000
    emulator.fail(CREATE, Fault.rate_limited(reset))
    with pytest.raises(PostError) as limited:
        poster_for(emulator, tmp_path / "s.json").post("later")
    error = limited.value
    assert (error.kind, error.exit_status) == ("rate_limited", ExitStatus.TEMPORARY_FAILURE)
    assert error.retry_at == datetime.fromtimestamp(reset, tz=timezone.utc)
    assert datetime.fromtimestamp(reset).astimezone().strftime("%Y-%m-%d %H:%M") in str(error)
    assert emulator.calls[CREATE] == 1


def test_a_login_rate_limit_is_a_rate_limit_too(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    emulator.fail("com.atproto.server.createSession", Fault.rate_limited(1_900_000_000))
    with pytest.raises(PostError) as limited:
        poster_for(emulator, tmp_path / "s.json").post("later")
    assert limited.value.kind == "rate_limited"


def test_connections_dropped_on_every_try_leave_the_post_uncertain(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    emulator.fail(CREATE, Fault.drop(), Fault.drop(), Fault.drop())
    emulator.fail("com.atproto.repo.getRecord", Fault.drop(), Fault.drop(), Fault.drop())
    result = poster_for(emulator, tmp_path / "s.json").post("who knows")
    assert not result.confirmed and result.post_id is None
    assert "broke after the request was sent" in result.uncertain
    assert result.check_url == f"https://bsky.app/profile/{emulator.handle}"


def test_a_timeout_is_retried_and_the_first_try_found_when_it_landed(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    emulator.fail(CREATE, Fault(delay=1.5))  # the server writes it after the client gave up
    poster = poster_for(emulator, tmp_path / "s.json", timeout=0.5, sleep=lambda seconds: time.sleep(1.5))
    assert poster.post("slow server").confirmed
    assert len(emulator.posts()) == 1 and emulator.calls[CREATE] == 1


def test_an_unreachable_server_is_retried_then_fails_temporarily(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    delays: List[float] = []
    poster = BlueskyPoster(
        Login("alice.test", "abcd-efgh-ijkl-mnop", f"http://127.0.0.1:{port}", tmp_path / "s.json"),
        timeout=2,
        retries=2,
        sleep=delays.append,
    )
    with pytest.raises(PostError) as failed:
        poster.post("nobody home")
    assert (failed.value.kind, failed.value.exit_status) == ("unreachable", ExitStatus.TEMPORARY_FAILURE)
    assert "BLUESKY_SERVICE" in str(failed.value)
    assert delays == [2.0, 4.0]


def test_a_suspended_account_is_forbidden(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    emulator.fail("com.atproto.server.createSession", Fault.takedown())
    with pytest.raises(PostError) as refused:
        poster_for(emulator, tmp_path / "s.json").post("hi")
    assert (refused.value.kind, refused.value.exit_status) == ("forbidden", ExitStatus.PERMISSION_DENIED)


# -- the session --------------------------------------------------------------------------------


def test_later_runs_reuse_the_saved_session_and_never_log_in_again(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    session_file = tmp_path / "state" / "bluesky-session.json"
    for run in range(3):
        poster_for(emulator, session_file).post(f"run {run}")
    assert emulator.calls["com.atproto.server.createSession"] == 1
    assert len(emulator.posts()) == 3


def test_an_old_access_token_is_refreshed_and_the_new_one_saved(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    session_file = tmp_path / "s.json"
    emulator.access_lifetime = 600  # the SDK refreshes an access token with under 15 minutes left
    poster_for(emulator, session_file).account()
    first = json.loads(session_file.read_text())["session"]
    refreshed = emulator.calls["com.atproto.server.refreshSession"]
    poster_for(emulator, session_file).post("refreshed")
    assert emulator.calls["com.atproto.server.createSession"] == 1
    assert emulator.calls["com.atproto.server.refreshSession"] > refreshed
    assert json.loads(session_file.read_text())["session"] != first


def test_a_refused_refresh_token_means_logging_in_again(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    session_file = tmp_path / "s.json"
    emulator.access_lifetime = 600  # old enough that the next run refreshes it
    poster_for(emulator, session_file).account()
    emulator.access_lifetime = 7200
    emulator.refuse_refresh = True
    assert poster_for(emulator, session_file).post("logged in again").confirmed
    assert emulator.calls["com.atproto.server.createSession"] == 2


def test_a_session_saved_for_another_account_is_not_used(emulator: BlueskyEmulator, tmp_path: Path) -> None:
    session_file = tmp_path / "s.json"
    poster_for(emulator, session_file).post("one")
    document = json.loads(session_file.read_text())
    session_file.write_text(json.dumps({**document, "handle": "someone-else.test"}))
    poster_for(emulator, session_file).post("two")
    assert emulator.calls["com.atproto.server.createSession"] == 2


def test_the_password_and_tokens_never_reach_a_log_or_a_message(
    emulator: BlueskyEmulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session_file = tmp_path / "s.json"
    scrubber = ScrubSecrets([])
    caplog.handler.addFilter(scrubber)
    root = logging.getLogger()
    root.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.DEBUG):
            emulator.fail(CREATE, Fault.server_error(), Fault.lose_reply())
            poster_for(emulator, session_file).post("first")
            logging.getLogger("test").debug("the saved session: %s", session_file.read_text())
            wrong = BlueskyPoster(
                Login(emulator.handle, "wrong-pass-word-9z9z", emulator.url, tmp_path / "other.json"),
                timeout=2,
                retries=0,
            )
            with pytest.raises(PostError) as refused:
                wrong.account()
            logging.getLogger("test").error("%s", refused.value)
    finally:
        root.removeHandler(caplog.handler)
    session = json.loads(session_file.read_text())["session"]
    tokens = [part for part in session.split(":::") if part.count(".") == 2]
    assert tokens, "the session string holds the tokens"
    secrets = [emulator.password, "wrong-pass-word-9z9z", *tokens]
    output = caplog.text + str(refused.value)
    assert "the saved session" in output
    assert [s for s in secrets if s in output] == []


def test_a_try_with_no_answer_then_a_server_error_is_uncertain_not_a_failure(
    emulator: BlueskyEmulator, tmp_path: Path
) -> None:
    """The first try may still land: saying "not posted" would let a later run post the line again."""
    emulator.fail(CREATE, Fault.drop(), Fault.server_error())
    emulator.fail("com.atproto.repo.getRecord", Fault.drop(), Fault.drop())
    result = poster_for(emulator, tmp_path / "s.json", retries=1).post("maybe")
    assert not result.confirmed and result.check_url


# -- the harness: a missing PDS skips, or fails when CI requires it ------------------------------


def test_without_npm_the_pds_tests_skip_or_fail_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    from pds import harness

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv(harness.REQUIRE, raising=False)
    with pytest.raises(pytest.skip.Exception, match="npm is not installed"):
        harness.install()
    monkeypatch.setenv(harness.REQUIRE, "1")
    with pytest.raises(pytest.fail.Exception, match="TWITTERBOT_REQUIRE_PDS=1"):
        harness.install()


def test_a_session_that_cannot_be_saved_still_posts_and_says_why(
    emulator: BlueskyEmulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the state folder should be")
    with caplog.at_level(logging.WARNING):
        result = poster_for(emulator, blocker / "bluesky-session.json").post("still posted")
    assert result.confirmed
    assert "could not save the Bluesky session" in caplog.text and "state folder writable" in caplog.text
