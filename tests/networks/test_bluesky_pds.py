"""The Bluesky poster against the real reference PDS (tests/pds): posts, facets, the length limits,
threads, the saved session, a refused password, a retried record that stays one post, and a
post's language (langs) and a line's content warning through bot.py."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any, Dict

import pytest
from bluesky_emulator import LossyProxy
from conftest import BotHome
from pds.harness import Pds, PdsAccount

from twitterbot.errors import ExitStatus, PostError
from twitterbot.networks import PostOptions
from twitterbot.networks.bluesky.poster import BlueskyPoster, Login
from twitterbot.networks.bluesky.records import PostRef
from twitterbot.networks.bluesky.text import measure


@pytest.fixture
def account(bluesky_pds: Pds) -> PdsAccount:
    return bluesky_pds.create_account("alice")


@pytest.fixture
def app_password(bluesky_pds: Pds, account: PdsAccount) -> str:
    return bluesky_pds.app_password(account)


def make_poster(service: str, account: PdsAccount, password: str, session_file: Path, **options: Any) -> BlueskyPoster:
    settings: Dict[str, Any] = {"timeout": 10, "retries": 2, "sleep": lambda seconds: None}
    settings.update(options)
    return BlueskyPoster(Login(account.handle, password, service, session_file), **settings)


def test_a_post_lands_with_its_link_and_a_reference_to_it(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    poster = make_poster(bluesky_pds.url, account, app_password, tmp_path / "session.json")
    result = poster.post("Hello from my Pi")

    assert result.confirmed
    (record,) = bluesky_pds.posts(account)
    assert record["value"]["text"] == "Hello from my Pi"
    rkey = record["uri"].rsplit("/", 1)[-1]
    assert result.url == f"https://bsky.app/profile/{account.handle}/post/{rkey}"
    assert PostRef.decode(result.post_id) == (record["uri"], record["cid"], record["uri"], record["cid"])
    assert poster.account() == f"@{account.handle} ({account.did})"


def test_links_hashtags_and_mentions_become_facets_and_an_unknown_handle_stays_text(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    bob = bluesky_pds.create_account("bob")
    text = f"Solved é at https://example.com/pegs #RaspberryPi with @{bob.handle} and @nobody.test"
    make_poster(bluesky_pds.url, account, app_password, tmp_path / "session.json").post(text)

    (record,) = bluesky_pds.posts(account)
    data = text.encode()
    found = {}
    for facet in record["value"]["facets"]:
        (feature,) = facet["features"]
        piece = data[facet["index"]["byteStart"] : facet["index"]["byteEnd"]].decode()
        found[piece] = feature
    assert found == {
        "https://example.com/pegs": {"$type": "app.bsky.richtext.facet#link", "uri": "https://example.com/pegs"},
        "#RaspberryPi": {"$type": "app.bsky.richtext.facet#tag", "tag": "RaspberryPi"},
        f"@{bob.handle}": {"$type": "app.bsky.richtext.facet#mention", "did": bob.did},
    }


def test_300_graphemes_fit_and_301_do_not_as_the_server_counts_them(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    poster = make_poster(bluesky_pds.url, account, app_password, tmp_path / "session.json")
    accent = "e\u0301"  # two code points, one grapheme, three bytes
    fits, too_long = accent * 300, accent * 301
    assert measure(fits).fits and not measure(too_long).fits

    assert poster.post(fits).confirmed
    with pytest.raises(PostError) as refused:
        poster.post(too_long)
    assert (refused.value.kind, refused.value.exit_status) == ("too_long", ExitStatus.DATA_ERROR)
    assert len(bluesky_pds.posts(account)) == 1


def test_the_3000_byte_rule_is_the_servers_too(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    family = "👨‍👩‍👧"  # one grapheme, 18 bytes
    text = family * 167  # 167 graphemes, 3,006 bytes
    fit = measure(text)
    assert (fit.length, fit.fits) == (167, False)
    assert "3,006 bytes" in fit.reason and "3,000-byte" in fit.reason

    poster = make_poster(bluesky_pds.url, account, app_password, tmp_path / "session.json")
    with pytest.raises(PostError) as refused:
        poster.post(text)
    assert refused.value.kind == "too_long", str(refused.value)
    assert poster.post(family * 166).confirmed  # 2,988 bytes


def test_replies_form_one_thread_with_the_root_and_the_parent(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    poster = make_poster(bluesky_pds.url, account, app_password, tmp_path / "session.json")
    first = poster.post("Progress: 1 of 3")
    second = poster.post("Progress: 2 of 3", PostOptions(reply_to=first.post_id))
    third = poster.post("Progress: 3 of 3", PostOptions(reply_to=second.post_id))

    records = {r["value"]["text"]: r for r in bluesky_pds.posts(account)}
    root, middle = records["Progress: 1 of 3"], records["Progress: 2 of 3"]

    def reply_of(text: str) -> Dict[str, Any]:
        reply = records[text]["value"]["reply"]
        return {part: {"uri": reply[part]["uri"], "cid": reply[part]["cid"]} for part in ("root", "parent")}

    strong = {"uri": root["uri"], "cid": root["cid"]}
    assert "reply" not in root["value"]
    assert reply_of("Progress: 2 of 3") == {"root": strong, "parent": strong}
    assert reply_of("Progress: 3 of 3") == {"root": strong, "parent": {"uri": middle["uri"], "cid": middle["cid"]}}
    assert third.confirmed


def test_a_second_poster_reuses_the_saved_session_without_the_password(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    session_file = tmp_path / "state" / "bluesky-session.json"
    make_poster(bluesky_pds.url, account, app_password, session_file).post("first run")

    assert stat.S_IMODE(session_file.stat().st_mode) == 0o600
    saved = session_file.read_text()
    assert app_password not in saved and account.password not in saved
    assert json.loads(saved)["handle"] == account.handle

    # A wrong password would fail createSession: the next run never sends it.
    later = make_poster(bluesky_pds.url, account, "wrong-pass-word-xxxx", session_file)
    assert later.post("second run").confirmed
    assert len(bluesky_pds.posts(account)) == 2


def test_a_refused_app_password_is_unauthorized_and_never_shown(
    bluesky_pds: Pds, account: PdsAccount, tmp_path: Path
) -> None:
    wrong = "zzzz-yyyy-xxxx-wwww"
    poster = make_poster(bluesky_pds.url, account, wrong, tmp_path / "session.json")
    for attempt in (lambda: poster.post("never posted"), poster.account):
        with pytest.raises(PostError) as refused:
            attempt()
        error = refused.value
        assert (error.kind, error.exit_status) == ("unauthorized", ExitStatus.PERMISSION_DENIED)
        assert "BLUESKY_APP_PASSWORD" in str(error) and wrong not in str(error)
    assert bluesky_pds.posts(account) == []
    assert not (tmp_path / "session.json").exists()


def test_after_a_lost_reply_the_post_is_found_under_its_record_key_and_not_sent_again(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    """The real server writes the record; the proxy in between loses its reply; before sending it
    again the poster looks its record key up, finds the post, and is done."""
    with LossyProxy(bluesky_pds.url, lose={"com.atproto.repo.createRecord": 1}) as proxy:
        poster = make_poster(proxy.url, account, app_password, tmp_path / "session.json")
        result = poster.post("posted once, whatever happens")

    assert result.confirmed
    (record,) = bluesky_pds.posts(account)
    assert PostRef.decode(result.post_id).uri == record["uri"]
    assert result.url.endswith(record["uri"].rsplit("/", 1)[-1])
    assert (proxy.calls["com.atproto.repo.createRecord"], proxy.calls["com.atproto.repo.getRecord"]) == (1, 1)


def test_sending_the_same_record_key_again_makes_no_second_post(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    """The look-up is lost too, so the poster sends the same record again: the real server refuses a
    second record under that key (it answers 500), and the post is confirmed by its key."""
    lose = {"com.atproto.repo.createRecord": 1, "com.atproto.repo.getRecord": 1}
    with LossyProxy(bluesky_pds.url, lose=lose) as proxy:
        poster = make_poster(proxy.url, account, app_password, tmp_path / "session.json")
        result = poster.post("posted once, even when sent twice")

    assert result.confirmed
    (record,) = bluesky_pds.posts(account)
    assert PostRef.decode(result.post_id).uri == record["uri"]
    assert (proxy.calls["com.atproto.repo.createRecord"], proxy.calls["com.atproto.repo.getRecord"]) == (2, 2)


def test_a_revoked_app_password_fails_the_account_check_at_once(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    """Revoking leaves the saved access token working for a while: the check must log in."""
    session_file = tmp_path / "session.json"
    poster = make_poster(bluesky_pds.url, account, app_password, session_file)
    poster.post("before revoking")
    owner = bluesky_pds.xrpc(
        "com.atproto.server.createSession", body={"identifier": account.handle, "password": account.password}
    )
    bluesky_pds.xrpc("com.atproto.server.revokeAppPassword", body={"name": "twitterbot"}, token=owner["accessJwt"])

    with pytest.raises(PostError) as refused:
        make_poster(bluesky_pds.url, account, app_password, session_file).account()
    assert refused.value.kind == "unauthorized"


def test_a_post_in_a_language_carries_it_as_langs(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    poster = make_poster(bluesky_pds.url, account, app_password, tmp_path / "session.json")
    poster.post("Olá do meu Pi", PostOptions(language="pt-BR"))
    poster.post("No language given")

    plain, portuguese = bluesky_pds.posts(account)  # newest first
    assert portuguese["value"]["text"] == "Olá do meu Pi" and portuguese["value"]["langs"] == ["pt-BR"]
    assert "langs" not in plain["value"]


def test_a_line_s_warning_is_its_first_line_and_its_language_its_langs(
    home: BotHome, bluesky_pds: Pds, account: PdsAccount, app_password: str
) -> None:
    for name in ("TWITTER_API_KEY", "TWITTER_API_SECRET", "TWITTER_ACCESS_TOKEN", "TWITTER_ACCESS_TOKEN_SECRET"):
        home.settings.pop(name)
    home.write_env(
        POST_TO="bluesky",
        BLUESKY_HANDLE=account.handle,
        BLUESKY_APP_PASSWORD=app_password,
        BLUESKY_SERVICE=bluesky_pds.url,
        POST_LANGUAGE="de",
    )
    home.write_tweets("{cw: Film spoilers; lang: en} The butler did it.\n")
    first = home.run("--force", "--json")
    assert first.returncode == 0, first.stderr
    home.write_tweets("Guten Morgen aus dem Garten.\n")
    second = home.run("--force", "--json")
    assert second.returncode == 0, second.stderr

    plain, warned = bluesky_pds.posts(account)  # newest first
    assert warned["value"]["text"] == "CW: Film spoilers\nThe butler did it."
    assert warned["value"]["langs"] == ["en"]  # the line's lang overrides POST_LANGUAGE
    assert (plain["value"]["text"], plain["value"]["langs"]) == ("Guten Morgen aus dem Garten.", ["de"])
    assert home.emulator.posts == []


def test_a_post_s_labels_are_its_records_self_labels(
    bluesky_pds: Pds, account: PdsAccount, app_password: str, tmp_path: Path
) -> None:
    """Self-labels say what a post's pictures show (sexual, nudity, porn, graphic-media): the PDS
    takes them as the record's com.atproto.label.defs#selfLabels, and a post without any has none."""
    import io

    from PIL import Image

    from twitterbot.pictures.prepare import Attachment

    drawn = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 150, 120)).save(drawn, "PNG")
    poster = make_poster(bluesky_pds.url, account, app_password, tmp_path / "session.json")
    picture = Attachment(drawn.getvalue(), "A sketch of a nude figure", "figure.png")
    poster.post("Life drawing", PostOptions(images=(picture,), labels=("nudity",)))
    poster.post("No labels")

    plain, labelled = bluesky_pds.posts(account)  # newest first
    labels = labelled["value"]["labels"]
    assert labels["$type"] == "com.atproto.label.defs#selfLabels"
    assert [value["val"] for value in labels["values"]] == ["nudity"]
    assert "labels" not in plain["value"]
