"""Secrets never appear in any output, in any encoding: logs, errors, tracebacks, JSON."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import List
from urllib.parse import quote, quote_plus

import pytest
from conftest import REGISTRY, BotHome
from hypothesis import given, settings
from hypothesis import strategies as st
from x_emulator import XEmulator

from twitterbot.errors import ConfigError
from twitterbot.settings.loading import load_config
from twitterbot.settings.secrets import MASK, Scrubber, ScrubSecrets, encodings, hide_pieces

# Keys with the characters that percent-encoding changes (X's own keys are letters and digits, but
# nothing stops a proxy or a future key format from using base64's alphabet).
AWKWARD_KEYS = {
    "consumer_key": "ck+Plus/Slash=Eq1234567",
    "consumer_secret": "cs/Secret+With=Padding==9876",
    "access_token": "12345-at+Token/Value=Abc",
    "access_token_secret": "ats=Secret/Ends+With+Plus+",
}


def every_form(secret: str) -> set:
    """What a leak looks like: the value and each encoding a layer under tweepy writes, any hex case."""
    once = quote(secret, safe="")
    forms = {secret, once, quote(secret, safe="/"), quote_plus(secret), quote(once, safe="")}
    return forms | {form.lower() for form in forms} | {form.upper() for form in forms}


def assert_no_secret_in(*outputs: str) -> None:
    for output in outputs:
        for secret in AWKWARD_KEYS.values():
            leaked = sorted(form for form in every_form(secret) if form in output)
            assert leaked == [], f"{secret} leaked as {leaked}"


@pytest.mark.parametrize("secret", list(AWKWARD_KEYS.values()))
def test_the_scrubber_catches_every_encoding_in_any_hex_case(secret: str) -> None:
    scrub = Scrubber([secret])
    for form in every_form(secret):
        assert scrub(f"before {form} after") == f"before {MASK} after", form
    assert scrub('oauth_consumer_key="' + quote(secret, safe="~") + '"') == f'oauth_consumer_key="{MASK}"'
    assert quote(quote(secret, safe=""), safe="") in encodings(secret)  # the signature base string


def test_short_values_are_not_scrubbed_and_no_secrets_change_nothing() -> None:
    assert Scrubber(["abc", ""])("abc is fine") == "abc is fine"
    assert Scrubber([])("anything") == "anything"


def test_the_log_filter_scrubs_messages_arguments_and_tracebacks() -> None:
    secret = AWKWARD_KEYS["consumer_secret"]
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "header %s", (quote(secret, safe=""),), None)
    try:
        raise ValueError(f"bad value {quote_plus(secret)}")
    except ValueError:
        record.exc_info = sys.exc_info()
    ScrubSecrets([secret]).filter(record)
    text = logging.Formatter().format(record)
    assert MASK in text and "bad value" in text
    assert_no_secret_in(text)


def test_a_key_pasted_into_another_setting_is_not_echoed(tmp_path: Path) -> None:
    key = "AbCdEf0123456789GhIjKlMnOpQrStUv"
    env = tmp_path / ".env"
    env.write_text(f"TWITTER_API_KEY={key}\nTWEET_TIMES={key}\nLOG_LEVEL={key[:12]}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    message = str(caught.value)
    assert "TWEET_TIMES" in message and "LOG_LEVEL" in message and f"{env} line 3" in message
    assert key not in message and key[:12] not in message


def test_a_value_that_looks_like_a_key_is_not_echoed_even_when_no_key_is_set(tmp_path: Path) -> None:
    token = "1234567890-AbCdEfGhIjKlMnOpQrStUvWxYz0123"
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, environ={"TWEET_ONE_IN": token})
    assert "TWEET_ONE_IN" in str(caught.value) and token not in str(caught.value)
    assert "looks like a key" in str(caught.value)


# Values a user may paste into the wrong setting: X's mixed-case key, an access token, a token of
# lower-case hex, a Bluesky app password.
PASTED = [
    "AbCdEf0123456789GhIjKlMnOpQrStUv",
    "1234567890-AbCdEfGhIjKlMnOpQrStUvWxYz0123",
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    "abcd-2efg-hij3-klmn",
]


def pieces(value: str) -> List[str]:
    """Every 8-character piece of `value`: none may be in a message."""
    return [value[start : start + 8] for start in range(len(value) - 7)]


@pytest.mark.parametrize("name", [name for name in REGISTRY.settings if name != "POST_TO"])
@pytest.mark.parametrize("pasted", PASTED)
def test_no_setting_error_repeats_a_pasted_key_whole_or_in_part(tmp_path: Path, name: str, pasted: str) -> None:
    """X_MONTHLY_BUDGET quoted its value's first 20 characters, which hiding the whole value missed:
    every setting's message goes through one place that hides a key-like value and its pieces,
    whether the key is also set (as the secret it is) or not."""
    for environ in ({name: pasted}, {name: pasted, "TWITTER_API_KEY": pasted.replace("-", "")}):
        try:
            load_config(REGISTRY, project_dir=tmp_path, environ=environ)
        except ConfigError as exc:
            leaked = [piece for piece in pieces(pasted) if piece in str(exc)]
            assert leaked == [], str(exc)


def test_the_budget_says_a_pasted_key_is_not_shown(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, environ={"X_MONTHLY_BUDGET": PASTED[0]})
    assert str(caught.value).startswith(
        "X_MONTHLY_BUDGET=(a value that looks like a key, not shown) from the environment"
    )


def test_a_piece_of_a_secret_pasted_elsewhere_is_hidden_where_a_message_shortens_it(tmp_path: Path) -> None:
    """A passphrase does not look like a key: only knowing the secrets finds it, shortened or not."""
    passphrase = "correct horse battery staple"
    environ = {"WEB_PASSWORD": passphrase, "POST_LANGUAGE": passphrase + " and more words to cut"}
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, environ=environ)
    assert "POST_LANGUAGE=" in str(caught.value)
    assert [piece for piece in pieces(passphrase) if piece in str(caught.value)] == []


@pytest.mark.parametrize("pasted", PASTED)
def test_a_key_given_to_a_flag_is_not_repeated_in_the_usage_error(home: BotHome, pasted: str) -> None:
    result = home.run("--one-in", pasted)
    assert result.returncode == 64
    assert "--one-in" in result.stderr and [piece for piece in pieces(pasted) if piece in result.stderr] == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="AbCdEf0123456789GhIj+/=-_", min_size=8, max_size=80), st.integers(0, 80), st.integers(8, 80))
def test_hide_pieces_leaves_no_piece_of_eight_characters(value: str, start: int, length: int) -> None:
    message = f"SETTING='{value[start : start + length]}' from the environment is wrong: fix SETTING"
    shown = hide_pieces(message, [value], keep=["SETTING"])
    assert [piece for piece in pieces(value) if piece in shown] == []
    assert shown.startswith("SETTING=") and shown.endswith("fix SETTING")


@pytest.fixture
def awkward_home(tmp_path: Path):
    with XEmulator(keys=dict(AWKWARD_KEYS)) as emulator:
        home = BotHome(tmp_path / "bot", emulator)
        home.path.mkdir()
        home.write_env(**emulator.env(), TWEET_ONE_IN="1", API_RETRIES="0", API_TIMEOUT="3")
        home.write_tweets("First post\nSecond post\n")
        yield home


def test_keys_with_plus_slash_and_equals_never_appear_in_debug_output(awkward_home: BotHome) -> None:
    emulator = awkward_home.emulator
    posted = awkward_home.run("--debug", "-v", "--json")
    assert posted.returncode == 0, posted.stderr
    assert len(emulator.posts) == 1  # the real tweepy client signed with these keys, and X accepted them
    assert "Authorization" in posted.stderr or "oauth" in posted.stderr.lower()  # the layers did log at DEBUG

    emulator.fail_next("unauthorized")
    refused = awkward_home.run("--debug", "-v", "--force", "--json")
    assert refused.returncode == 77, refused.stderr

    checked = awkward_home.run("check", "--online", "--debug", "-v")
    assert "X accepts the keys" in checked.stdout, checked.stderr
    assert_no_secret_in(posted.stdout, posted.stderr, refused.stdout, refused.stderr, checked.stdout, checked.stderr)


def test_a_key_with_undecodable_bytes_is_still_hidden() -> None:
    """os.environ turns bytes that are not UTF-8 into lone surrogates; hiding such a key must not fail."""
    from twitterbot.settings.secrets import Scrubber

    key = "\udc80AbCdEf0123456789GhIj"
    assert Scrubber([key])(f"key={key}") == "key=********"


def test_json_output_masks_secrets_value_by_value_and_stays_json(capsys) -> None:
    import json

    from twitterbot.arguments import print_json

    print_json(
        {"ok": False, "text": "key FALS and sk+/x", "nested": [{"FALS": 1234}], "count": 1234},
        secrets=["FALS", "sk+/x", "1234"],
    )
    printed = capsys.readouterr().out
    value = json.loads(printed)  # still one JSON object: `false` was not taken for the key FALS
    assert value["ok"] is False
    assert value["text"] == "key ******** and ********"
    assert value["nested"] == [{"********": "********"}] and value["count"] == "********"
    assert "1234" not in printed and "sk+" not in printed


def test_a_short_secret_does_not_mask_the_setting_name_that_says_what_to_fix(tmp_path: Path) -> None:
    """Found by hypothesis: an app password "blue" turned BLUESKY_APP_PASSWORD into ********SKY_..."""
    with pytest.raises(ConfigError) as caught:
        load_config(REGISTRY, project_dir=tmp_path, environ={"BLUESKY_APP_PASSWORD": "blue", "POST_TO": "bluesky"})
    (problem,) = caught.value.problems
    assert problem.startswith("BLUESKY_APP_PASSWORD from the environment is not an app password")


def test_a_secret_that_contains_a_setting_name_is_still_masked_whole() -> None:
    secret = "xxPOST_TOyyzz1234567890abcdef"
    scrub = Scrubber([secret])
    assert scrub(f"TWEET_ONE_IN='{secret}' is not a number", keep=["POST_TO", "TWEET_ONE_IN"]) == (
        f"TWEET_ONE_IN='{MASK}' is not a number"
    )


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=8, max_size=60),
    st.binary(max_size=10),
    st.binary(max_size=10),
)
def test_a_key_in_base64_is_masked_alone_and_inside_a_longer_base64_text(key: str, before: bytes, after: bytes) -> None:
    """A watched command may print a key in base64 (a dumped Basic header, a debug line): the
    standard and URL-safe forms are masked wherever the key starts in the encoded bytes."""
    import base64

    scrub = Scrubber([key])
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        alone = encode(key.encode()).decode()
        inside = encode(before + key.encode() + after).decode()
        assert MASK in scrub(alone) and MASK in scrub(inside)
        assert alone not in scrub(alone) and alone.rstrip("=") not in scrub(inside)


def test_a_scheduled_line_that_holds_a_key_is_posted_and_shown_masked(home: BotHome) -> None:
    secret = home.settings["TWITTER_ACCESS_TOKEN_SECRET"]
    home.write_tweets(f"oops, pasted {secret} here\n")
    dry = home.run("--dry-run", "--force")
    assert dry.returncode == 0 and secret not in dry.stdout + dry.stderr and "********" in dry.stdout
    result = home.run()
    assert result.returncode == 0, result.stderr
    assert home.emulator.texts == ["oops, pasted ******** here"]
    shown = home.run("history").stdout + home.run("history", "--json").stdout
    assert secret not in shown and "oops, pasted ******** here" in shown


def test_a_url_s_user_password_and_query_are_masked_where_printed():
    from twitterbot.settings.secrets import masked_url

    shown = masked_url("http://user:PASS@host.example:8080/x.png?token=T")
    assert "PASS" not in shown and "token=T" not in shown and "user" not in shown
    assert shown == "http://***@host.example:8080/x.png?***"
    assert masked_url("https://host.example/x.png") == "https://host.example/x.png"


def test_an_img_fetch_error_never_prints_the_url_s_password_or_token():
    import pytest

    from twitterbot.errors import PostError
    from twitterbot.posting.tagpictures import PictureRules, make_pictures
    from twitterbot.posting.tags import read_tags

    def refuse(url):
        raise OSError("refused")

    tagged = read_tags("{img http://user:PASS@host.example/x.png?token=SECRET}")
    with pytest.raises(PostError) as raised:
        make_pictures(tagged, PictureRules(), where="here", fetch=refuse)
    assert "PASS" not in str(raised.value) and "SECRET" not in str(raised.value)
