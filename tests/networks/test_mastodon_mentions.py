"""Reading Mastodon's mentions (MastodonReader.mentions: twitterbot/networks/mastodon/reader.py and
mentions.py, bearer-token GETs without Mastodon.py): against the loopback emulator's notifications
(which the end-to-end runs use) and against mastodon-mock, a second, independent server; each
failure the PostError Mastodon.py's would be; and a reply to a mention: threaded under it, naming
its author, never more public than it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from loopback import Answer
from mastodon_server import ACCOUNT_ID, TOKEN, MastodonEmulator, MockInstance

from twitterbot.errors import ErrorKind, ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.mastodon import NETWORK
from twitterbot.networks.mastodon.mentions import text_of
from twitterbot.networks.mastodon.poster import MastodonPoster
from twitterbot.networks.mastodon.reader import MastodonReader
from twitterbot.networks.mentions import Author, Mention

DAY = 24 * 3600


def poster_for(server: Any, **kwargs: Any) -> MastodonPoster:
    settings = server.env()
    return MastodonPoster(
        instance=settings["MASTODON_INSTANCE"],
        access_token=kwargs.pop("access_token", settings["MASTODON_ACCESS_TOKEN"]),
        visibility=kwargs.pop("visibility", "unlisted"),
        timeout=5,
        retries=0,
    )


def reader_for(server: Any, **kwargs: Any) -> MastodonReader:
    settings = server.env()
    return MastodonReader(
        instance=settings["MASTODON_INSTANCE"],
        access_token=kwargs.pop("access_token", settings["MASTODON_ACCESS_TOKEN"]),
        timeout=5,
    )


def a_day_ago() -> datetime:
    return datetime.now(timezone.utc) - timedelta(days=1)


@pytest.fixture
def server(mastodon_emulator: MastodonEmulator) -> MastodonEmulator:
    return mastodon_emulator


def test_mastodon_listens() -> None:
    assert NETWORK.listens and NETWORK.read_price is None


def test_the_first_read_goes_back_a_day_oldest_first(server: MastodonEmulator) -> None:
    server.mention("@pibot long ago", by="old", ago=2 * DAY)
    first = server.mention("@pibot hello", by="ada", ago=3600)
    second = server.mention("@pibot hi", by="grace", domain="elsewhere.example", ago=60)

    page = reader_for(server).mentions(None, not_before=a_day_ago(), limit=10)

    assert [mention.id for mention in page.mentions] == [first.id, second.id]
    hello, hi = page.mentions
    assert hello.network == "mastodon" and hello.reply_to == first.id and hello.text == "@pibot hello"
    assert hello.author == Author(hello.author.id, "@ada", False, "")
    assert hi.author.handle == "@grace@elsewhere.example"  # a remote account, as it is reached from here
    assert hello.created_at.tzinfo is not None
    assert page.reads == 2  # verify_credentials, then one page
    assert json.loads(page.cursor or "") == {"me": ACCOUNT_ID, "since": server.notifications[-1].id}


def test_a_read_with_nothing_new_costs_one_request(server: MastodonEmulator) -> None:
    server.mention("@pibot hello", by="ada")
    cursor = reader_for(server).mentions(None, not_before=a_day_ago(), limit=10).cursor
    before = server.reads

    page = reader_for(server).mentions(cursor, not_before=a_day_ago(), limit=10)  # the next run

    assert page.mentions == () and page.reads == 1 and page.cursor is None
    assert server.reads - before == 1
    assert server.seen[-1].path == "/api/v1/notifications"


def test_more_than_the_cap_leaves_the_rest_for_later_none_skipped_none_twice(server: MastodonEmulator) -> None:
    made = [server.mention(f"@pibot number {n}", by=f"user{n % 7}", ago=DAY - 600 + n).id for n in range(95)]
    reader = reader_for(server)
    cursor, seen, reads = None, [], []
    for _ in range(20):
        page = reader.mentions(cursor, not_before=a_day_ago(), limit=10)
        seen += [mention.id for mention in page.mentions]
        reads.append(page.reads)
        cursor = page.cursor or cursor
        if not page.mentions:
            break
    assert seen == made  # oldest first, each once
    assert reads[0] == 1 + 2  # the account, then two pages of 80 back to a day ago
    assert set(reads[1:]) == {1}


def test_the_poster_reads_as_the_reader_does(server: MastodonEmulator) -> None:
    """Once a round has made the poster (a reply was due), its reads are the reader's."""
    made = server.mention("@pibot hello", by="ada")
    page = poster_for(server).mentions(None, not_before=a_day_ago(), limit=10)
    assert [mention.id for mention in page.mentions] == [made.id] and page.reads == 2
    assert page == reader_for(server).mentions(None, not_before=a_day_ago(), limit=10)


def test_a_netrc_never_replaces_the_token(server: MastodonEmulator, tmp_path: Any, monkeypatch: Any) -> None:
    """requests would send a ~/.netrc's login for the server's host instead of the token (as
    Mastodon.py guards against): the reader sends the token."""
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password something\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert reader_for(server).mentions(None, not_before=a_day_ago(), limit=10).reads == 2


def test_the_first_read_pages_back_only_to_a_day_ago(server: MastodonEmulator) -> None:
    for n in range(100):
        server.mention(f"@pibot old {n}", by="ada", ago=3 * DAY - n)
    new = server.mention("@pibot new", by="ada")
    page = reader_for(server).mentions(None, not_before=a_day_ago(), limit=10)
    assert [mention.id for mention in page.mentions] == [new.id] and page.reads == 2


def test_the_account_s_own_posts_are_left_out(server: MastodonEmulator) -> None:
    server.mention("@pibot note to self", by="pibot")  # a real server sends no such notification
    theirs = server.mention("@pibot hello", by="ada")
    page = reader_for(server).mentions(None, not_before=a_day_ago(), limit=10)
    assert [mention.id for mention in page.mentions] == [theirs.id]


def test_bot_flag_bio_visibility_and_answers_to_the_bot(server: MastodonEmulator) -> None:
    poster = poster_for(server)
    own = poster.post("a post of the bot's")
    robot = server.mention("@pibot beep", by="robot", bot=True, note="<p>A bot. <a href='#'>#nobot</a></p>")
    reply = server.mention("@pibot thanks", by="ada", reply_to=own.post_id, visibility="direct")
    other = server.mention("@pibot look", by="grace", reply_to=robot.id, visibility="unlisted")

    by_id = {
        mention.id: mention for mention in reader_for(server).mentions(None, not_before=a_day_ago(), limit=10).mentions
    }

    assert by_id[robot.id].author.bot and by_id[robot.id].author.bio == "A bot. #nobot"
    assert not by_id[reply.id].author.bot
    assert by_id[reply.id].answers_bot and by_id[reply.id].visibility == "direct"
    assert not by_id[other.id].answers_bot and by_id[other.id].visibility == "unlisted"
    assert by_id[robot.id].visibility == "public"


@pytest.mark.parametrize(
    "html, text",
    [
        ("<p>Hi &amp; bye &lt;3 &quot;ok&quot; &#39;yes&#39;</p>", "Hi & bye <3 \"ok\" 'yes'"),
        ("<p>one<br />two<br>three</p><p>four</p>", "one\ntwo\nthree\n\nfour"),
        ('<p><span class="h-card" translate="no"><a href="https://x.example/@pibot" class="u-url mention">'
         "@<span>pibot</span></a></span> hello \U0001f44b\U0001f3fd :blobcat:</p>", "@pibot hello \U0001f44b\U0001f3fd :blobcat:"),
        ('<p><a href="https://example.com/a/long/path"><span class="invisible">https://</span><span class="ellipsis">'
         'example.com/a/lo</span><span class="invisible">ng/path</span></a></p>', "https://example.com/a/long/path"),
        ("<p>caf&eacute; &#x1F600; &nbsp;x</p>", "caf\u00e9 \U0001f600 \u00a0x"),
        ("plain text, no tags", "plain text, no tags"),
        ("<p>unclosed <b>bold", "unclosed bold"),
        ("", ""),
    ],
)  # fmt: skip
def test_html_becomes_plain_text(html: str, text: str) -> None:
    assert text_of(html) == text


def test_a_mention_s_html_comes_through_as_text(server: MastodonEmulator) -> None:
    server.mention("x", by="ada", content="<p>@<span>pibot</span> Tom &amp; Jerry \U0001f600</p><p>2nd<br />3rd</p>")
    (mention,) = reader_for(server).mentions(None, not_before=a_day_ago(), limit=10).mentions
    assert mention.text == "@pibot Tom & Jerry \U0001f600\n\n2nd\n3rd"


@pytest.mark.parametrize(
    "handle, text, sent",
    [
        ("@ada", "hello", "@ada hello"),
        ("@ada", "@ada hello", "@ada hello"),
        ("@ada", "hello @ADA!", "hello @ADA!"),
        ("@ada", "hello @adam", "@ada hello @adam"),
        ("@ada", "hello @ada@elsewhere.example", "@ada hello @ada@elsewhere.example"),
        ("@ada@elsewhere.example", "hello @ada", "@ada@elsewhere.example hello @ada"),
        ("@ada@elsewhere.example", "hi @ada@elsewhere.example.", "hi @ada@elsewhere.example."),
    ],
)
def test_a_reply_names_its_author(handle: str, text: str, sent: str) -> None:
    mention = Mention("mastodon", "1", Author("9", handle), "@pibot hi", datetime.now(timezone.utc), "1")
    assert NETWORK.addressed(text, mention) == sent


@pytest.mark.parametrize(
    "mentioned, setting, sent",
    [("direct", "public", "direct"), ("private", "unlisted", "private"), ("public", "unlisted", "unlisted"),
     ("unlisted", "public", "unlisted"), ("public", "direct", "direct")],
)  # fmt: skip
def test_a_reply_is_threaded_under_the_mention_never_more_public(
    server: MastodonEmulator, mentioned: str, setting: str, sent: str
) -> None:
    status = server.mention("@pibot psst", by="ada", domain="elsewhere.example", visibility=mentioned)
    poster = poster_for(server, visibility=setting)
    (mention,) = reader_for(server).mentions(None, not_before=a_day_ago(), limit=10).mentions
    result = poster.post(
        NETWORK.addressed("hello", mention), PostOptions(reply_to=mention.reply_to, visibility=mention.visibility)
    )
    reply = server.statuses[-1]
    assert result.confirmed and reply.in_reply_to_id == status.id
    assert reply.text == "@ada@elsewhere.example hello" and reply.visibility == sent


def test_a_token_without_read_notifications_is_told_which_scopes(server: MastodonEmulator) -> None:
    server.scopes = ("read:accounts", "write:statuses")
    with pytest.raises(PostError) as caught:
        reader_for(server).mentions(json.dumps({"me": ACCOUNT_ID, "since": "1"}), not_before=a_day_ago(), limit=10)
    assert caught.value.kind is ErrorKind.FORBIDDEN
    assert "read:notifications" in str(caught.value) and "MASTODON_ACCESS_TOKEN" in str(caught.value)


def test_a_bad_token_is_unauthorized(server: MastodonEmulator) -> None:
    with pytest.raises(PostError) as caught:
        reader_for(server, access_token="wrong" + TOKEN).mentions(None, not_before=a_day_ago(), limit=10)
    assert caught.value.kind is ErrorKind.UNAUTHORIZED


def test_the_emulator_pages_as_mastodon_does(server: MastodonEmulator) -> None:
    import requests

    made = [server.mention(f"@pibot {n}", by="ada") for n in range(5)]
    headers = {"Authorization": f"Bearer {TOKEN}"}
    url = server.url + "/api/v1/notifications"
    newest = requests.get(url, params={"types[]": "mention", "limit": 2}, headers=headers, timeout=5)
    assert [each["status"]["id"] for each in newest.json()] == [made[4].id, made[3].id]
    assert 'rel="next"' in newest.headers["Link"] and "types[]=mention" in newest.headers["Link"]
    after = requests.get(url, params={"min_id": server.notifications[0].id, "limit": 2}, headers=headers, timeout=5)
    assert [each["status"]["id"] for each in after.json()] == [made[2].id, made[1].id]  # just after, newest first
    since = requests.get(url, params={"since_id": server.notifications[0].id, "limit": 2}, headers=headers, timeout=5)
    assert [each["status"]["id"] for each in since.json()] == [made[4].id, made[3].id]
    assert requests.get(url, headers={}, timeout=5).status_code == 401
    assert len(requests.get(url, params={"limit": 500}, headers=headers, timeout=5).json()) == 5


@pytest.mark.parametrize(
    "body",
    [
        {"id": "1"},
        [{"type": "mention"}],
        [{"id": "1", "type": "mention", "account": {"id": "5", "acct": "a"}, "status": "deleted"}],
        [{"id": "1", "type": "mention", "account": "a", "status": {"id": "2", "content": "x"}}],
        [{"id": "1", "type": "mention", "account": {"id": "5", "acct": "a"}, "status": {"id": "2"}}],
        [{"id": "1", "type": "mention", "account": {"id": "5", "acct": "a"},
          "status": {"id": "2", "content": "<p>x</p>", "created_at": "not a time"}}],
        ["a notification"],
        b"<html>Bad Gateway</html>",
    ],
)  # fmt: skip
def test_an_odd_answer_is_a_post_error(server: MastodonEmulator, body: object) -> None:
    server.answer_next("notifications", Answer(body))
    with pytest.raises(PostError):
        reader_for(server).mentions(json.dumps({"me": ACCOUNT_ID, "since": "1"}), not_before=a_day_ago(), limit=10)


def test_a_deleted_status_s_notification_is_passed_over(server: MastodonEmulator) -> None:
    gone = {
        "id": "3000",
        "type": "mention",
        "created_at": "2026-01-01T00:00:00.000Z",
        "account": {"id": "5"},
        "status": None,
    }
    server.answer_next("notifications", Answer([gone]))
    page = reader_for(server).mentions(json.dumps({"me": ACCOUNT_ID, "since": "1"}), not_before=a_day_ago(), limit=10)
    assert page.mentions == () and json.loads(page.cursor or "")["since"] == "3000"


# -- against mastodon-mock -------------------------------------------------------------------------


def test_mastodon_mock_s_mentions_read_the_same(mastodon_mock: MockInstance) -> None:
    """bob mentions alice on mastodon-mock (its own notifications, pages and shapes): alice's
    reader reads it once, then nothing new in one request; her reply is threaded under it."""
    from mastodon import Mastodon

    bob = Mastodon(access_token="bob_token", api_base_url=mastodon_mock.url, version_check_mode="none")
    posted = bob.status_post("@alice hello & welcome", visibility="private")
    alice, reading = poster_for(mastodon_mock), reader_for(mastodon_mock)

    page = reading.mentions(None, not_before=a_day_ago(), limit=10)

    (mention,) = page.mentions
    assert mention.id == str(posted["id"]) and mention.author.handle == "@bob" and mention.visibility == "private"
    assert "hello & welcome" in mention.text and not mention.answers_bot
    again = reading.mentions(page.cursor, not_before=a_day_ago(), limit=10)
    assert again.mentions == () and again.reads == 1
    reply = alice.post(
        NETWORK.addressed("hi bob", mention), PostOptions(reply_to=mention.reply_to, visibility=mention.visibility)
    )
    shown = bob.status(reply.post_id)
    assert str(shown["in_reply_to_id"]) == mention.id and shown["visibility"] == "private"
    answer = bob.status_post("@alice thanks", in_reply_to_id=reply.post_id)
    (thanks,) = reading.mentions(page.cursor, not_before=a_day_ago(), limit=10).mentions
    assert thanks.id == str(answer["id"]) and thanks.answers_bot


# -- the reader's failures are the poster's --------------------------------------------------------

_CURSOR = json.dumps({"me": ACCOUNT_ID, "since": "1"})
_RESET = (("X-RateLimit-Reset", (datetime.now(timezone.utc) + timedelta(minutes=10)).isoformat()),)


def _through_mastodon_py(url: str, timeout: float = 5) -> PostError:
    """The PostError Mastodon.py's read of the notifications meets, as the poster classifies it."""
    from mastodon import Mastodon, MastodonError

    from twitterbot.networks.http import bounded_session
    from twitterbot.networks.mastodon.errors import classify

    client = Mastodon(
        access_token=TOKEN,
        api_base_url=url,
        request_timeout=timeout,
        ratelimit_method="throw",
        version_check_mode="none",
        session=bounded_session(),
    )
    with pytest.raises((MastodonError, RecursionError)) as caught:
        client.notifications(types=["mention"], min_id="1", limit=10)
    return classify(caught.value, url, client)  # type: ignore[arg-type]


def _through_the_reader(url: str, timeout: float = 5) -> PostError:
    with pytest.raises(PostError) as caught:
        MastodonReader(instance=url, access_token=TOKEN, timeout=timeout).mentions(
            _CURSOR, not_before=a_day_ago(), limit=10
        )
    return caught.value


def _same(read: PostError, expected: PostError) -> None:
    """The same kind, exit status, advice and (within the second the clocks' sampling moves it)
    end of a rate limit. Mastodon.py loses the server's words of a refused list (it says the
    reason phrase, "401: Unauthorized"): the reader keeps them."""
    assert (read.kind, read.exit_status) == (expected.kind, expected.exit_status)
    assert str(read).split("): ", 1)[-1] == str(expected).split("): ", 1)[-1]
    if expected.retry_at is None:
        assert read.retry_at is None
    else:
        assert read.retry_at is not None and abs((read.retry_at - expected.retry_at).total_seconds()) <= 2


@pytest.mark.parametrize(
    "answer",
    [
        Answer({"error": "The access token is invalid"}, status=401),
        Answer({"error": "Record not found"}, status=404),
        Answer(None, status=404),
        Answer(b"<html>Not Found</html>", status=404, content_type="text/html"),
        Answer({"error": "Gone"}, status=410),
        Answer({"error": "Validation failed: it is wrong"}, status=422),
        Answer("a plain string", status=400),
        Answer({"error": "Too many requests"}, status=429, headers=_RESET),
        Answer({"error": "Too many requests"}, status=429),
        Answer({}, status=500),
        Answer(b"<html>Bad Gateway</html>", status=502, content_type="text/html"),
        Answer({"error": "down"}, status=503),
        Answer({"error": "slow"}, status=504),
        Answer({"error": "loop"}, status=508),
    ],
)  # fmt: skip
def test_a_refusal_is_the_same_post_error_as_mastodon_py_s(server: MastodonEmulator, answer: Answer) -> None:
    server.answer_next("notifications", answer, answer)
    read = _through_the_reader(server.url)
    _same(read, _through_mastodon_py(server.url))
    if isinstance(answer.body, dict) and answer.body.get("error") and answer.status < 429:
        assert f"{answer.status}: {answer.body['error']}" in str(read)  # the server's own words


def test_a_rate_limit_whose_end_cannot_be_read_is_a_rate_limit_still(server: MastodonEmulator) -> None:
    """Mastodon.py calls it an answer it could not read; for a read it is a 429 all the same (both
    a temporary failure: the next round tries again)."""
    answer = Answer({"error": "Too many requests"}, status=429, headers=(("X-RateLimit-Reset", "soon"),))
    server.answer_next("notifications", answer, answer)
    read, expected = _through_the_reader(server.url), _through_mastodon_py(server.url)
    assert read.kind is ErrorKind.RATE_LIMITED and read.retry_at is None
    assert read.exit_status == expected.exit_status == ExitStatus.TEMPORARY_FAILURE


@pytest.mark.parametrize("said", ["This action is outside the authorized scopes", "Your login is currently disabled"])
def test_a_refused_list_names_read_notifications_as_before(server: MastodonEmulator, said: str) -> None:
    """Any 403 of the list: most often a token made for posting alone (as the poster said it)."""
    server.answer_next("notifications", Answer({"error": said}, status=403), Answer({"error": said}, status=403))
    read, expected = _through_the_reader(server.url), _through_mastodon_py(server.url)
    assert (
        (read.kind, read.exit_status)
        == (expected.kind, expected.exit_status)
        == (
            ErrorKind.FORBIDDEN,
            ExitStatus.PERMISSION_DENIED,
        )
    )
    assert "read:notifications" in str(read) and "MASTODON_ACCESS_TOKEN" in str(read)


@pytest.mark.parametrize("body", [b"<html>not JSON</html>", b"[" * 100_000, b"\xff\xfe\x00"])
def test_an_answer_that_cannot_be_read_is_a_temporary_failure_as_before(server: MastodonEmulator, body: bytes) -> None:
    server.answer_next("notifications", Answer(body), Answer(body))
    read, expected = _through_the_reader(server.url), _through_mastodon_py(server.url)
    assert (
        (read.kind, read.exit_status)
        == (expected.kind, expected.exit_status)
        == (
            ErrorKind.NETWORK,
            ExitStatus.TEMPORARY_FAILURE,
        )
    )


def test_an_unreachable_server_and_a_silent_one_fail_as_before() -> None:
    import socket

    with socket.socket() as nobody:  # a port bound, never listened on: the connection is refused
        nobody.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{nobody.getsockname()[1]}"
        read, expected = _through_the_reader(url), _through_mastodon_py(url)
        assert (read.kind, read.exit_status, str(read)) == (expected.kind, expected.exit_status, str(expected))
        assert read.kind is ErrorKind.UNREACHABLE
    with socket.socket() as silent:  # connects (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        read, expected = _through_the_reader(url, timeout=0.5), _through_mastodon_py(url, timeout=0.5)
        assert (read.kind, read.exit_status) == (expected.kind, expected.exit_status)
        assert read.kind is ErrorKind.TIMEOUT
        # As before, but a read's words: it posted nothing (Mastodon.py's were a post's).
        assert str(read) == str(expected).replace(
            "the post may have been made, look at the account",
            "this was a read, so nothing was posted: the next run asks again",
        )


def test_a_read_that_gets_no_answer_says_nothing_was_posted_not_that_a_post_may_exist() -> None:
    """Reading mentions from a server that sends its headers a byte at a time: the error is a
    read's, never a post's "the post may have been made" (issue 60)."""
    from trickle_server import TrickleServer

    with TrickleServer("headers", every=0.2) as slow:
        error = _through_the_reader(slow.url, timeout=1)
    assert "this was a read, so nothing was posted" in str(error)
    assert "may have been made" not in str(error)
    assert int(error.exit_status) == int(ExitStatus.TEMPORARY_FAILURE)
