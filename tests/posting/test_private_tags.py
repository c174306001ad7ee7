"""CBTS's {private} and {direct} on networks whose posts are all public (issue 60): such an
expansion goes to Mastodon alone, as private as it asks, and never to X or Bluesky, where everyone
would read it; check says so, and a bot with no Mastodon is told what to do (65)."""

from __future__ import annotations

import json

from conftest import BotHome
from mastodon_server import MastodonEmulator
from x_emulator import XEmulator


def _grammar(home: BotHome, *texts: str) -> None:
    path = home.path / "toots.json"
    path.write_text(json.dumps({"origin": list(texts)}), encoding="utf-8")
    home.write_env(TWEETS_FILE=str(path))


def test_a_direct_expansion_goes_to_mastodon_alone_never_public_on_x(
    home: BotHome, emulator: XEmulator, mastodon_emulator: MastodonEmulator
) -> None:
    _grammar(home, "{direct} A word for my followers only")
    home.write_env(**mastodon_emulator.env(), POST_TO="x,mastodon")
    dry = home.run("--dry-run", "--force")
    assert dry.returncode == 0 and "would post line 1 to Mastodon (28 of 500 characters);" in dry.stderr, dry.stderr
    check = home.run("check")
    assert "1 sampled expansion is {private} or {direct}: X has only public posts" in check.stdout, check.stdout
    assert home.run("--force").returncode == 0
    assert emulator.posts == []
    (status,) = mastodon_emulator.statuses
    assert status.visibility == "direct" and status.text == "A word for my followers only"


def test_a_bot_on_x_alone_is_told_a_private_grammar_has_nowhere_to_go(home: BotHome, emulator: XEmulator) -> None:
    _grammar(home, "{private} Just between us")
    home.write_env(POST_TO="x")
    result = home.run("--force")
    assert result.returncode == 65
    assert "is {private} or {direct}, which go only to Mastodon" in result.stderr
    assert "add mastodon to POST_TO, or take those tags out" in result.stderr
    assert emulator.posts == []
