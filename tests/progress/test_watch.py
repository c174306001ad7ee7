"""`bot.py watch`, run as a subprocess the way cron or systemd would, posting to the X API emulator."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
from typing import Tuple

from conftest import BotHome

from twitterbot.progress.watch import Patterns


def test_output_passes_through_and_the_result_is_posted_in_the_thread(home: BotHome) -> None:
    result = home.run(
        "watch", "--every", "1h", "--name", "copy", "--", "sh", "-c", "echo one; echo two >&2; printf 'end'"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "one\nend"
    assert "two\n" in result.stderr
    # It ended long before PROGRESS_FIRST_AFTER (5m): its result is its only post.
    assert [post.text for post in home.emulator.posts] == [home.emulator.texts[0]]
    assert re.fullmatch(r"copy finished in [01]s", home.emulator.texts[0])


def test_with_first_after_0_the_first_line_opens_the_thread(home: BotHome) -> None:
    result = home.run("watch", "--every", "1h", "--first-after", "0", "--name", "copy", "--", "sh", "-c", "echo one")
    assert result.returncode == 0, result.stderr
    posts = home.emulator.posts
    assert posts[0].text == "copy: one (0s)"  # the rest wait an hour
    assert re.fullmatch(r"copy finished in [01]s", posts[1].text)
    assert posts[1].reply_to == posts[0].id
    assert len(posts) == 2


def test_a_failing_command_s_exit_status_and_last_line_are_passed_on(home: BotHome) -> None:
    result = home.run("watch", "--", "sh", "-c", "echo working; echo 'disk full' >&2; exit 3")
    assert result.returncode == 3
    assert re.fullmatch(r"sh failed with exit 3 after [01]s: disk full", home.emulator.texts[-1])


def test_a_command_killed_by_a_signal_exits_128_plus_it(home: BotHome) -> None:
    result = home.run("watch", "--name", "doomed", "--", "sh", "-c", "echo going; kill -KILL $$")
    assert result.returncode == 128 + signal.SIGKILL
    assert re.fullmatch(r"doomed failed with signal SIGKILL after [01]s: going", home.emulator.texts[-1])


CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    def stop(signum, frame):
        # os.write: the signal may arrive while print("ready") is still flushing.
        os.write(1, f"got {signal.Signals(signum).name}\\n".encode())
        sys.exit(5)
    signal.signal(signal.SIGTERM, stop)
    print("ready", flush=True)
    time.sleep(30)
    """
)


def test_sigterm_is_forwarded_and_a_stopped_run_continues_its_thread_next_time(home: BotHome) -> None:
    process = home.start("watch", "--name", "long", "--first-after", "0", "--", sys.executable, "-c", CHILD)
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=20)
    assert stdout == "got SIGTERM\n", stderr
    assert process.returncode == 5
    assert "stopped; starting it again continues this run" in stderr
    assert home.emulator.texts == ["long: ready (0s)"]  # stopped is not failed: no post

    again = home.run("watch", "--name", "long", "--", "sh", "-c", "echo ready; echo done")
    assert again.returncode == 0, again.stderr
    first, result = home.emulator.posts
    assert result.text.startswith("long finished in") and result.reply_to == first.id  # no second announcement


def test_only_lines_matching_the_pattern_are_news_and_its_groups_fill_the_template(home: BotHome) -> None:
    result = home.run(
        "watch",
        "--pattern",
        r"(?P<percent>\d+)% done",
        "--template",
        "{name} is {percent}% done",
        "--name",
        "render",
        "--first-after",
        "0",
        "--",
        "sh",
        "-c",
        "echo starting; echo '40% done'; echo '80% done'",
    )
    assert result.returncode == 0, result.stderr
    assert home.emulator.texts[0] == "render is 40% done"


def test_a_template_field_the_job_does_not_have_is_a_usage_error_before_anything_runs(home: BotHome) -> None:
    result = home.run("watch", "--template", "{percent}", "--", "sh", "-c", "echo ran")
    assert result.returncode == 64  # a flag: a usage error
    assert "{percent}" in result.stderr and "--template" in result.stderr
    assert result.stdout == "" and home.emulator.posts == []
    home.write_env(PROGRESS_TEMPLATE="{percent}")
    from_settings = home.run("watch", "--", "sh", "-c", "echo ran")
    assert from_settings.returncode == 78  # a setting: a config error
    assert "{percent}" in from_settings.stderr and "PROGRESS_TEMPLATE" in from_settings.stderr
    assert from_settings.stdout == "" and home.emulator.posts == []


def test_a_missing_command_exits_127_and_posts_nothing(home: BotHome) -> None:
    result = home.run("watch", "--", "no-such-program-here", "--flag")
    assert result.returncode == 127
    assert "command not found: no-such-program-here" in result.stderr
    assert home.emulator.posts == []


def test_no_command_and_a_bad_pattern_are_usage_errors(home: BotHome) -> None:
    assert home.run("watch").returncode == 64
    bad = home.run("watch", "--pattern", "([", "--", "true")
    assert bad.returncode == 64 and "--pattern" in bad.stderr


def test_a_dry_run_prints_each_post_with_its_reason_and_needs_no_keys(home: BotHome) -> None:
    home.env_file.write_text("")  # no keys at all
    result = home.run(
        "watch", "--dry-run", "--first-after", "0", "--name", "demo", "--", "sh", "-c", "echo step 1; exit 2"
    )
    assert result.returncode == 2
    assert "(first progress post, after 0s)" in result.stderr
    assert "dry run, would post (final)" in result.stderr
    assert "posted dry-run" not in result.stderr and "posting" not in result.stderr
    assert "dry run, not posted (reply to dry-run-1):\n    demo failed with exit 2 after" in result.stderr
    assert home.emulator.posts == []
    assert not (home.path / "state").exists()


def test_patterns_pick_the_message_and_fields() -> None:
    patterns = Patterns.compile(r"(?P<n>\d+) of (?P<total>\d+)", r"record: (.*)")
    assert patterns.update_for("copied 3 of 9") == ("copied 3 of 9", {"n": "3", "total": "9"}, False)
    assert patterns.update_for("record: to be") == ("to be", {}, True)
    assert patterns.update_for("nothing to see") is None
    assert Patterns().update_for("any line") == ("any line", {}, False)
    assert Patterns().update_for("   ") is None
    assert Patterns.compile(r"msg=(?P<message>\w+) at (?P<where>\w+)").update_for("msg=hi at home") == (
        "hi",
        {"where": "home"},
        False,
    )


# -- a reader that goes away (`bot.py watch -- CMD | head`) ---------------------------------------
#
# The pipe here is real: the test reads what it wants from watch's stdout and closes its end, as
# `head -1` does. The closed pipe is the terminal's business, not the job's: never posted as a
# failure; the command meets the closed pipe at its next write, as it would without watch.


def _read_one_line_and_go_away(process: subprocess.Popen) -> Tuple[str, str]:
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    process.wait(timeout=30)
    return first, stderr


def test_a_reader_that_goes_away_stops_the_command_as_sigpipe_would_and_nothing_is_posted(home: BotHome) -> None:
    process = home.start("watch", "--name", "pipe", "--", "seq", "1", "300000")
    first, stderr = _read_one_line_and_go_away(process)
    assert first == "1\n"
    assert process.returncode == 128 + signal.SIGPIPE, stderr  # seq was killed by SIGPIPE: the shell's 141
    assert "ended with signal SIGPIPE after the reader of its output went away: not a failure" in stderr
    assert "BrokenPipeError" not in stderr and "Traceback" not in stderr and "failed" not in stderr
    assert home.emulator.posts == []


def test_a_command_that_fails_on_the_closed_pipe_is_not_posted_as_failed(home: BotHome) -> None:
    # Python ignores SIGPIPE: a script meets a BrokenPipeError instead, and exits 1 with a traceback,
    # or 120 when what was left in its buffer cannot be flushed at exit either (which of the two is timing).
    process = home.start("watch", "--name", "py", "--", sys.executable, "-c", "for i in range(300000): print(i)")
    first, stderr = _read_one_line_and_go_away(process)
    assert first == "0\n"
    assert process.returncode in (1, 120)  # the job's own status, passed on
    said = (
        f"ended with exit {process.returncode} after the reader of its output went away: not a failure, nothing posted"
    )
    assert said in stderr
    assert home.emulator.posts == []


def test_a_command_that_carries_on_after_the_reader_went_away_posts_its_real_result(home: BotHome) -> None:
    script = "trap '' PIPE; echo one; sleep 1; echo two; echo three; echo 'all copied' >&2"
    process = home.start("watch", "--name", "copy", "--", "sh", "-c", script)
    first, stderr = _read_one_line_and_go_away(process)
    assert first == "one\n"
    assert process.returncode == 0, stderr
    assert "all copied" in stderr
    assert len(home.emulator.texts) == 1 and home.emulator.texts[0].startswith("copy finished in"), stderr


def test_a_dry_run_into_head_says_nothing_about_a_pipe(tmp_path) -> None:
    """The issue's own line, run by a shell: `bot.py watch --dry-run --name pipe -- seq 1 300000 | head -1`."""
    import shlex

    from conftest import BOT_PY

    (tmp_path / ".env").write_text("")
    line = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(BOT_PY))} --env-file {shlex.quote(str(tmp_path / '.env'))}"
        " watch --dry-run --name pipe -- seq 1 300000 | head -1; echo status=${PIPESTATUS[0]} >&2"
    )
    result = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.stdout == "1\n"
    assert "status=141" in result.stderr
    assert "would post" not in result.stderr and "BrokenPipeError" not in result.stderr, result.stderr


def test_a_command_that_prints_the_bot_s_own_keys_never_posts_them(home: BotHome) -> None:
    """The finding: `watch -- sh -c 'echo token <the X secret>'` logged `token ********` but posted
    the secret in clear, and `history` printed it. Now the post, the history (text and JSON) and
    the log all mask it, in every form: raw, percent-encoded and base64."""
    import base64
    import json
    from urllib.parse import quote

    secret = home.settings["TWITTER_API_SECRET"]
    encoded = base64.b64encode(f"user:{secret}".encode()).decode()
    script = f"echo token {secret}; echo 'url=?k={quote(secret, safe='')}'; echo 'Authorization: Basic {encoded}'"
    result = home.run(
        "watch",
        "--every",
        "1s",
        "--first-after",
        "0",
        "--name",
        "leaky",
        "--pattern",
        ".",
        "--",
        "sh",
        "-c",
        script + "; sleep 1.2",
    )
    assert result.returncode == 0, result.stderr
    posted = "\n".join(home.emulator.texts)
    assert home.emulator.texts and "token ********" in posted, posted
    for leak in (secret, quote(secret, safe=""), encoded, secret[5:25]):
        assert leak not in posted
        assert leak not in result.stderr
    history = home.run("history")
    as_json = home.run("history", "--json")
    assert history.returncode == 0 and as_json.returncode == 0, history.stderr
    assert "********" in history.stdout and secret not in history.stdout + as_json.stdout
    assert all(secret not in (entry["text"] or "") for entry in json.loads(as_json.stdout))


def test_a_job_name_or_a_command_s_output_cannot_forge_a_log_line(home: BotHome) -> None:
    """Finding 8: a newline in a job's name (or in what a server or a command said) started a log
    line of its own. Every record is one line; the name's newline is written as \\n."""
    forged = "copy\n2026-01-01 00:00:00 twitterbot ERROR: forged\x1b[2J"
    result = home.run("watch", "--every", "1h", "--first-after", "0", "--name", forged, "--", "sh", "-c", "echo one")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines and all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d twitterbot [A-Z]+: ", line) for line in lines), lines
    assert not any(line.startswith("2026-01-01 00:00:00 twitterbot ERROR: forged") for line in lines)
    assert (
        "\x1b" not in result.stderr and "copy\\n2026-01-01 00:00:00 twitterbot ERROR: forged\\x1b[2J" in result.stderr
    )
