"""Reading mentions from Bluesky's notifications (networks/bluesky/notifications.py) without a
server: the cursor, the bound on pages, and notifications of odd shapes; and the poster's read
against the emulator for what the real network cannot be made to answer (tests/bluesky_emulator.py).
The real network's answers: test_bluesky_mentions.py."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any, List, Optional, Tuple

import pytest
from bluesky_emulator import BlueskyEmulator, Fault
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twitterbot.errors import ErrorKind, ExitStatus, PostError
from twitterbot.networks.bluesky import NETWORK
from twitterbot.networks.bluesky.notifications import MAX_HANDLED, MAX_PAGES, Position, read
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.bluesky.reader import BlueskyReader
from twitterbot.networks.bluesky.session import FRESH_FOR, fresh_session, trusted_did

BOT = "did:plc:bot"
ADA = "did:plc:ada"
START = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)


def note(n: int, *, reason: str = "mention", did: str = ADA, record: Any = "default", at: Optional[str] = None) -> Any:
    """The n-th notification (five minutes apart, from START), as the SDK gives it."""
    if record == "default":
        record = SimpleNamespace(text=f"@bot hello {n}", reply=None, created_at=None)
    stamp = at or (START + timedelta(minutes=5 * n)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    author = SimpleNamespace(did=did, handle="ada.test", labels=None, description=None)
    return SimpleNamespace(
        uri=f"at://{did}/app.bsky.feed.post/{n:04d}",
        cid=f"cid{n}",
        reason=reason,
        indexed_at=stamp,
        author=author,
        record=record,
    )


class Server:
    """Notifications served newest first, `size` a page, counting the pages asked for."""

    def __init__(self, notes: List[Any], size: int = 100) -> None:
        self.notes = sorted(notes, key=lambda each: each.indexed_at, reverse=True)
        self.size = size
        self.pages = 0

    def __call__(self, cursor: Optional[str]) -> Tuple[List[Any], Optional[str]]:
        self.pages += 1
        start = int(cursor or 0)
        end = start + self.size
        return self.notes[start:end], str(end) if end < len(self.notes) else None


def ids(page: Any) -> List[str]:
    return [mention.id.rsplit("/", 1)[-1] for mention in page.mentions]


def test_bluesky_listens() -> None:
    assert NETWORK.listens


def test_pages_are_read_down_to_the_floor_and_the_mentions_come_oldest_first_none_twice() -> None:
    server = Server([note(n) for n in range(1, 8)], size=3)  # pages: 7 6 5 | 4 3 2 | 1
    first = read(server, BOT, None, not_before=START, limit=4)
    assert ids(first) == ["0001", "0002", "0003", "0004"] and first.reads == 3 == server.pages
    position = Position.decode(first.cursor or "")
    assert position == Position(BOT, START + timedelta(minutes=10), frozenset(note(n).uri for n in (2, 3, 4)))

    rest = read(server, BOT, first.cursor, not_before=START, limit=4)
    assert ids(rest) == ["0005", "0006", "0007"] and rest.reads == 3  # 0001, below the floor, ends it
    again = read(server, BOT, rest.cursor, not_before=START, limit=4)
    assert again.mentions == () and again.cursor is None and again.reads == 2  # 0004 ends it


def test_a_read_with_nothing_new_is_one_request() -> None:
    server = Server([note(n) for n in range(1, 8)])
    first = read(server, BOT, None, not_before=START, limit=10)
    assert read(server, BOT, first.cursor, not_before=START, limit=10).reads == 1


def test_a_mention_sorted_below_those_read_is_still_read_within_the_window_and_once() -> None:
    notes = [note(n) for n in range(1, 5)]
    server = Server(notes)
    first = read(server, BOT, None, not_before=START, limit=10)
    # Held up on its way, or from an app whose clock is behind: it sorts between 0003 and 0004.
    late = note(8, at="2026-11-28T12:17:00.000Z")
    too_late = note(9, at="2026-11-28T12:09:00.000Z")  # more than WINDOW below the newest read
    server.notes = Server([*notes, late, too_late]).notes
    page = read(server, BOT, first.cursor, not_before=START, limit=10)
    assert ids(page) == ["0008"]
    assert read(server, BOT, page.cursor, not_before=START, limit=10).mentions == ()


def test_a_cursor_names_at_most_max_handled_mentions_and_reads_none_again() -> None:
    many = [note(n, at=(START + timedelta(seconds=n)).isoformat()) for n in range(MAX_HANDLED + 50)]
    server = Server(many)
    page = read(server, BOT, None, not_before=START, limit=len(many))
    assert len(page.mentions) == len(many)
    position = Position.decode(page.cursor or "")
    assert position is not None and len(position.handled) == MAX_HANDLED
    assert read(server, BOT, page.cursor, not_before=START, limit=len(many)).mentions == ()


def test_a_cursor_that_cannot_be_read_or_is_another_accounts_reads_back_to_not_before(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server([note(n) for n in range(1, 4)])
    assert ids(read(server, BOT, "nonsense", not_before=START + timedelta(minutes=10), limit=9)) == ["0002", "0003"]
    assert "cannot be read" in caplog.text
    other = Position("did:plc:other", START + timedelta(minutes=15), frozenset([note(3).uri])).encode()
    assert ids(read(server, BOT, other, not_before=START, limit=9)) == ["0001", "0002", "0003"]


def test_a_first_read_with_nothing_new_keeps_no_cursor() -> None:
    page = read(Server([]), BOT, None, not_before=START, limit=5)
    assert page.mentions == () and page.cursor is None and page.reads == 1


def test_quotes_likes_and_the_accounts_own_posts_are_left_out_and_a_post_notified_twice_is_one_mention() -> None:
    twice = note(4)
    server = Server(
        [
            note(1, reason="quote"),
            note(2, reason="like"),
            note(3, did=BOT),
            twice,
            SimpleNamespace(**{**vars(twice), "reason": "reply"}),
        ]
    )
    page = read(server, BOT, None, not_before=START, limit=9)
    assert ids(page) == ["0004"]
    # The account's own post was passed over: named too, so it is not looked at again.
    handled = frozenset([note(3, did=BOT).uri, twice.uri])
    assert Position.decode(page.cursor or "") == Position(BOT, START + timedelta(minutes=10), handled)


def test_notifications_of_odd_shapes_are_skipped_and_read_past_never_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    odd = [
        note(1, record=SimpleNamespace(text=None, reply=None)),  # not a post
        note(2, record=SimpleNamespace(text="hi", reply=SimpleNamespace(root=None, parent=None))),  # a broken reply
        note(3, at="yesterday"),  # no time
        SimpleNamespace(uri=None, indexed_at="2026-11-28T12:00:05Z"),
        note(6, record=None),
        SimpleNamespace(**{**vars(note(5)), "uri": "0"}),  # no at:// address: a cursor could not name it
    ]
    page = read(Server([*odd, note(7)]), BOT, None, not_before=START, limit=2)
    assert ids(page) == ["0007"]
    assert page.cursor and note(7).uri in Position.decode(page.cursor).handled  # type: ignore[union-attr]
    assert caplog.text.count("skipping a Bluesky notification") == 6


def test_the_limit_counts_mentions_answered_and_the_cursor_passes_what_was_skipped() -> None:
    server = Server([note(1, did=BOT), note(2, record=None), note(3), note(4)])
    page = read(server, BOT, None, not_before=START, limit=1)
    assert ids(page) == ["0003"]
    assert ids(read(server, BOT, page.cursor, not_before=START, limit=1)) == ["0004"]


def test_a_read_stops_after_its_bound_of_pages_saying_so(caplog: pytest.LogCaptureFixture) -> None:
    server = Server([note(n) for n in range(1, MAX_PAGES + 5)], size=1)
    page = read(server, BOT, None, not_before=START, limit=3)
    assert server.pages == MAX_PAGES and "are not read" in caplog.text
    assert ids(page) == ["0005", "0006", "0007"]  # the newest MAX_PAGES, oldest of them first


def test_times_with_any_precision_or_offset_compare_as_times() -> None:
    later = note(2, at="2026-11-28T13:07:30.5+01:00")  # 12:07:30.5 UTC
    page = read(Server([note(1), later, note(3)]), BOT, None, not_before=START, limit=9)
    assert ids(page) == ["0001", "0002", "0003"]
    assert page.mentions[1].created_at == START + timedelta(minutes=7, seconds=30.5)


# -- the poster against the emulator ---------------------------------------------------------


def poster(emu: BlueskyEmulator, tmp_path: Path) -> BlueskyPoster:
    return BlueskyPoster(Login(emu.handle, emu.password, emu.url, tmp_path / "session.json"), timeout=5, retries=0)


def reader(emu: BlueskyEmulator, tmp_path: Path, made: Optional[BlueskyPoster] = None) -> BlueskyReader:
    """What a round of replies reads with: the saved session as it is (an earlier run saved one,
    logging in now if none has), else the poster (`made`)."""
    if not (tmp_path / "session.json").exists():
        poster(emu, tmp_path).account()
    posters = [made] if made else []

    def make() -> BlueskyPoster:
        if not posters:
            posters.append(poster(emu, tmp_path))
        return posters[0]

    return BlueskyReader(emu.handle, emu.url, tmp_path / "session.json", timeout=5, poster=make)


def test_an_answer_of_another_shape_is_a_post_error_saying_so(tmp_path: Path) -> None:
    with BlueskyEmulator() as emu:
        emu.canned["app.bsky.notification.listNotifications"] = {"notifications": "none today"}
        with pytest.raises(PostError) as raised:
            reader(emu, tmp_path).mentions(None, not_before=START, limit=5)
    assert raised.value.exit_status == ExitStatus.TEMPORARY_FAILURE
    assert "could not be read" in str(raised.value)


@pytest.mark.parametrize(
    "fault, kind",
    [
        (Fault.server_error(502), ErrorKind.SERVER_ERROR),
        (Fault.rate_limited(0), ErrorKind.RATE_LIMITED),
        (Fault(status=400, body={"error": "InvalidRequest", "message": "bad cursor"}), ErrorKind.REJECTED),
        (Fault.takedown(), ErrorKind.FORBIDDEN),
        (Fault.drop(), ErrorKind.NETWORK),
        (Fault(delay=2), ErrorKind.TIMEOUT),
    ],
)
def test_a_refused_read_is_a_post_error_of_its_kind(tmp_path: Path, fault: Fault, kind: str) -> None:
    with BlueskyEmulator() as emu:
        emu.canned["app.bsky.notification.listNotifications"] = {"notifications": []}
        poster(emu, tmp_path).account()  # the saved session the read is made with
        emu.fail("app.bsky.notification.listNotifications", fault)
        with pytest.raises(PostError) as raised:
            BlueskyReader(emu.handle, emu.url, tmp_path / "session.json", timeout=1, poster=no_poster).mentions(
                None, not_before=START, limit=5
            )
    assert raised.value.kind == kind


def test_an_empty_answer_is_one_read_and_no_cursor(tmp_path: Path) -> None:
    with BlueskyEmulator() as emu:
        emu.canned["app.bsky.notification.listNotifications"] = {"notifications": []}
        page = reader(emu, tmp_path).mentions(None, not_before=START, limit=5)
        assert emu.calls["app.bsky.notification.listNotifications"] == 1
    assert page.mentions == () and page.cursor is None


# -- hostile answers: well-formed mentions or a PostError, never a traceback ---------------------

_ANY = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.lists(st.integers(), max_size=2), st.just({})
)


def mostly(valid: Any) -> Any:
    """`valid` 29 times in 30, else anything: an answer holds an odd value now and then."""
    return st.integers(0, 29).flatmap(lambda draw: _ANY if draw == 0 else valid)


_TIME = mostly(st.sampled_from(["2026-11-28T12:00:00.000Z", "2026-11-28T12:00:00Z", "2026-11-28T13:00:00+01:00"]))
_URI = mostly(st.sampled_from([f"at://{ADA}/app.bsky.feed.post/3aaa", f"at://{BOT}/app.bsky.feed.post/3bbb", "at://x"]))
_CID = mostly(st.just("bafyreib2rxk3rh6kzwq"))
_REF = mostly(st.fixed_dictionaries({"uri": _URI, "cid": _CID}))
_RECORD = mostly(
    st.fixed_dictionaries(
        {"$type": st.just("app.bsky.feed.post"), "text": mostly(st.text(max_size=20)), "createdAt": _TIME},
        optional={"reply": mostly(st.fixed_dictionaries({"root": _REF, "parent": _REF}))},
    )
)
_LABEL = st.fixed_dictionaries(
    {
        "src": mostly(st.sampled_from([ADA, BOT])),
        "uri": _URI,
        "val": mostly(st.sampled_from(["bot", "porn"])),
        "cts": _TIME,
    }
)
_AUTHOR = mostly(
    st.fixed_dictionaries(
        {"did": mostly(st.sampled_from([ADA, BOT])), "handle": mostly(st.just("ada.test"))},
        optional={"description": mostly(st.text(max_size=10)), "labels": mostly(st.lists(_LABEL, max_size=2))},
    )
)
_NOTIFICATION = st.fixed_dictionaries(
    {
        "uri": _URI,
        "cid": _CID,
        "author": _AUTHOR,
        "reason": mostly(st.sampled_from(["mention", "reply", "quote", "like"])),
        "record": _RECORD,
        "isRead": mostly(st.booleans()),
        "indexedAt": _TIME,
    }
)
_ANSWER = st.integers(0, 9).flatmap(
    lambda draw: _ANY
    if draw == 0
    else st.fixed_dictionaries({"notifications": _ANY}, optional={"cursor": _ANY})
    if draw == 1
    else st.fixed_dictionaries({"notifications": st.lists(_NOTIFICATION, min_size=1, max_size=3)})
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answer=_ANSWER)
def test_any_answer_gives_well_formed_mentions_or_a_post_error(tmp_path: Path, answer: Any) -> None:
    with BlueskyEmulator() as emu:
        emu.canned["app.bsky.notification.listNotifications"] = answer
        try:
            page = reader(emu, tmp_path).mentions(None, not_before=START - timedelta(days=1), limit=5)
        except PostError as exc:
            assert exc.summary
            return
    for mention in page.mentions:
        assert isinstance(mention.text, str) and mention.author.handle.startswith("@")
        assert mention.reply_to.split()[0] == mention.id and len(mention.reply_to.split()) == 4
    assert page.cursor is None or Position.decode(page.cursor) is not None


# -- the session: a read with nothing new is one request, and never a second login ---------------

LIST = "app.bsky.notification.listNotifications"


def test_a_saved_session_with_a_fresh_token_reads_in_one_request_and_replies_with_no_other(tmp_path: Path) -> None:
    with BlueskyEmulator() as emu:
        emu.canned[LIST] = {"notifications": []}
        poster(emu, tmp_path).account()  # an earlier run logged in and saved the session
        before = dict(emu.calls)
        later = poster(emu, tmp_path)
        later.mentions(None, not_before=START, limit=5)
        assert {method: n - before.get(method, 0) for method, n in emu.calls.items() if n != before.get(method, 0)} == {
            LIST: 1
        }
        later.post("a reply")
        assert emu.calls["com.atproto.server.getSession"] == before.get("com.atproto.server.getSession", 0)
        assert emu.calls["com.atproto.server.createSession"] == 1 and len(emu.posts()) == 1


def no_poster() -> BlueskyPoster:
    raise AssertionError("the read made a poster")


def test_a_saved_session_with_a_fresh_token_is_read_without_a_poster_in_one_request(tmp_path: Path) -> None:
    with BlueskyEmulator() as emu:
        emu.canned[LIST] = {"notifications": []}
        poster(emu, tmp_path).account()  # an earlier run logged in and saved the session
        before = dict(emu.calls)
        later = BlueskyReader(emu.handle, emu.url, tmp_path / "session.json", timeout=5, poster=no_poster)
        page = later.mentions(None, not_before=START, limit=5)
        assert page.reads == 1 and page.mentions == ()
        assert {method: n - before.get(method, 0) for method, n in emu.calls.items() if n != before.get(method, 0)} == {
            LIST: 1
        }


def test_a_saved_session_the_server_refuses_means_logging_in_again_once(tmp_path: Path) -> None:
    with BlueskyEmulator() as emu:
        emu.canned[LIST] = {"notifications": []}
        poster(emu, tmp_path).account()
        emu._access.clear()  # the server forgot the session (moved, or signed out everywhere)
        later = poster(emu, tmp_path)
        assert reader(emu, tmp_path, later).mentions(None, not_before=START, limit=5).reads == 1
        later.post("then a reply")
        assert emu.calls["com.atproto.server.createSession"] == 2 and emu.calls[LIST] == 2


def test_a_refused_session_and_a_refused_password_is_an_error_saying_so(tmp_path: Path) -> None:
    with BlueskyEmulator() as emu:
        emu.canned[LIST] = {"notifications": []}
        poster(emu, tmp_path).account()
        stale = poster(emu, tmp_path)  # with the app password the bot was given
        emu._access.clear()
        emu.password = "another-pass-word"  # which was revoked since
        with pytest.raises(PostError) as refused:
            reader(emu, tmp_path, stale).mentions(None, not_before=START, limit=5)
        assert emu.calls["com.atproto.server.createSession"] == 2  # one try with it, no more
    assert refused.value.kind == ErrorKind.UNAUTHORIZED and "BLUESKY_APP_PASSWORD" in str(refused.value)


def test_a_saved_token_near_its_end_is_refreshed_before_the_read(tmp_path: Path) -> None:
    with BlueskyEmulator() as emu:
        emu.canned[LIST] = {"notifications": []}
        emu.access_lifetime = 600  # less than the SDK's 15 minutes: it refreshes the token first
        poster(emu, tmp_path).account()
        refreshed = emu.calls["com.atproto.server.refreshSession"]
        reader(emu, tmp_path).mentions(None, not_before=START, limit=5)
        assert emu.calls["com.atproto.server.refreshSession"] > refreshed
        assert emu.calls["com.atproto.server.createSession"] == 1


@pytest.mark.parametrize("saved", ["", "a:::b", "h:::did:plc:x:::not-a-jwt:::r:::https://pds", ":::" * 9])
def test_a_session_string_the_sdk_cannot_read_is_never_trusted(saved: str) -> None:
    assert trusted_did(saved) is None and fresh_session(saved) is None


@pytest.mark.parametrize("left", [FRESH_FOR - 60, FRESH_FOR + 60, 3600])
def test_the_reader_takes_a_saved_session_exactly_when_the_poster_would_trust_it(tmp_path: Path, left: int) -> None:
    with BlueskyEmulator() as emu:
        emu.access_lifetime = left
        poster(emu, tmp_path).account()
    saved = json.loads((tmp_path / "session.json").read_text())["session"]
    read = fresh_session(saved)
    assert (read.did if read else None) == trusted_did(saved)
    assert (read is None) == (left < FRESH_FOR) and (read is None or read.pds == emu.url.rstrip("/"))
