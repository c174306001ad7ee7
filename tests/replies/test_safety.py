"""Who is answered: "stop", "status" and #nobot read as a person reads them, whatever the
characters that write them (full-width forms, invisible format characters), and a job's status
line told to strangers without the bot's folders."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from twitterbot.networks.mentions import Author, Mention
from twitterbot.replies.safety import Politeness, judge, says_status, says_stop

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("text", ["@pibot stop", "@pibot ｓｔｏｐ", "@pibot S\u200bTOP", "@pibot st\u00adop please"])
def test_stop_is_honoured_however_it_is_written(text: str) -> None:
    assert says_stop(text)


@pytest.mark.parametrize("text", ["@pibot stopped", "@pibot nonstop", "@pibot s top"])
def test_other_words_are_not_stop(text: str) -> None:
    assert not says_stop(text)


def test_status_is_read_as_stop_is() -> None:
    assert says_status("@pibot ｓｔａｔｕｓ?") and says_status("@pibot sta\u200btus")


@pytest.mark.parametrize("bio", ["＃nobot", "#nobots here", "#No\u200bBot", "hi #NOBOT"])
def test_a_nobot_profile_is_left_alone_however_it_is_written(bio: str) -> None:
    mention = Mention("chat", "1", Author("9", "@ada", False, bio), "@pibot hello", NOW, "1")
    verdict = judge(mention, Politeness(), now=NOW, stopped=False, last_reply=None)
    assert verdict is not None and "#nobot" in verdict.reason


def test_a_job_s_status_line_names_the_bot_s_folders_without_their_paths(tmp_path: Path) -> None:
    from twitterbot.cli import built_in
    from twitterbot.replies.command import without_paths
    from twitterbot.settings.loading import load_config

    (tmp_path / ".env").write_text("POST_TO=x\n")
    config = load_config(built_in(), project_dir=tmp_path, env_file=tmp_path / ".env", environ={})
    line = f"hamlet: cannot write {config.state.history}: disk full; see {tmp_path}/watch.log"
    shown = without_paths(line, config)
    assert str(tmp_path) not in shown and "history.sqlite3" in shown and "watch.log" in shown
