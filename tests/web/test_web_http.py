"""`bot.py serve` over HTTP: what it shows, whom it lets in, what it refuses, what it never shows.

The history is made by the real CLI posting to the X emulator (web_home.populate); the server is
the real command, under waitress, on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest
from conftest import A_DAEMON_OF_THIS_CHECKOUT, BotHome
from web_home import (
    BLUESKY_PASSWORD,
    MASTODON_TOKEN,
    PASSWORD,
    PICTURE_ALT,
    PLAIN_LINE,
    SCRIPT_LINE,
    UNCERTAIN_LINE,
    Made,
    Server,
    keep_job_picture,
    populate,
    secret_forms,
    served,
    start_server,
)


@pytest.fixture
def made(home: BotHome) -> Made:
    return populate(home)


@pytest.fixture
def server(home: BotHome, made: Made) -> Iterator[Server]:
    yield from served(home)


def test_the_page_shows_the_posts_the_uncertain_one_and_the_job(server: Server, made: Made) -> None:
    status, headers, html = server.get()
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    assert PLAIN_LINE in html
    assert f'href="https://x.com/i/status/{made.posted_id}"' in html
    assert UNCERTAIN_LINE in html
    # Where to look for the uncertain post: the account's page, from the access token's user id.
    assert 'href="https://x.com/intent/user?user_id=12345"' in html
    assert made.job_name in html and "pegs english finished in" in html
    assert '<meta http-equiv="refresh"' in html


@A_DAEMON_OF_THIS_CHECKOUT  # no daemon of this checkout may run meanwhile
def test_status_json_has_the_same_facts(server: Server, made: Made) -> None:
    status, headers, body = server.get("status.json")
    assert status == 200 and headers["Content-Type"] == "application/json"
    data = json.loads(body)
    assert data["cap"]["posts"] == 5 and data["cap"]["limit"] == 10  # three runs and the job's two posts
    assert data["bag"] == {
        "left": 1,
        "total": 4,
        "grammar": False,
    }  # three were posted (the uncertain one counts as posted)
    texts = [run["text"] for run in data["runs"]]
    assert texts == [SCRIPT_LINE, UNCERTAIN_LINE, PLAIN_LINE]
    first = data["runs"][-1]["networks"][0]
    assert first["outcome"] == "posted" and first["url"] == f"https://x.com/i/status/{made.posted_id}"
    uncertain = [item for item in data["attention"] if item["kind"] == "uncertain"]
    assert len(uncertain) == 1 and UNCERTAIN_LINE in uncertain[0]["title"]
    assert uncertain[0]["link"] == "https://x.com/intent/user?user_id=12345"
    (job,) = data["jobs"]
    assert job["name"] == made.job_name and job["state"] == "done" and job["threads"][0][1].startswith("https://x.com/")
    assert data["next_run"]["source"] == "settings" and data["next_run"]["at"]


def test_a_line_with_script_is_shown_as_text(server: Server) -> None:
    _, _, html = server.get()
    assert "<script" not in html
    assert "A line with &lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt; in it" in html


def test_no_secret_in_any_encoding_on_the_page_or_in_the_json(home: BotHome, server: Server) -> None:
    secrets = [*home.emulator.keys.values(), PASSWORD, MASTODON_TOKEN, BLUESKY_PASSWORD]
    pages = {path: server.get(path)[2] for path in ("", "status.json", "static/status.css", "nothing-here")}
    leaks = [
        f"{what} in /{path}"
        for path, text in pages.items()
        for what, form in secret_forms(secrets).items()
        if form.lower() in text.lower()
    ]
    assert leaks == []


def test_a_secret_written_into_a_line_is_masked(home: BotHome, made: Made) -> None:
    # A line holding the password itself (pasted by mistake) is still never shown.
    only = home.path / "leak.txt"
    only.write_text(f"oops {PASSWORD} and {base64.b64encode(PASSWORD.encode()).decode()}\n")
    assert home.run("--tweets", str(only)).returncode == 0
    server = start_server(home)
    try:
        html, body = server.get()[2], server.get("status.json")[2]
    finally:
        server.stop()
    assert "oops ******** and ********" in html and "oops ******** and ********" in body
    assert PASSWORD not in html + body


@pytest.mark.parametrize("password", [None, "wrong", PASSWORD[:-1], PASSWORD + "x", ""])
def test_with_a_password_every_request_needs_it(server: Server, password) -> None:
    for path in ("", "status.json", "static/status.css", "nothing-here"):
        status, headers, body = server.get(path, password=password)
        assert status == 401, path
        assert headers["WWW-Authenticate"].startswith('Basic realm="twitterbot"')
        assert PLAIN_LINE not in body


def test_a_job_shows_its_kept_picture_with_its_alt_text(home: BotHome, made: Made) -> None:
    job_id, png = keep_job_picture(home, made.job_name)
    server = start_server(home)
    try:
        _, _, html = server.get()
        status, headers, body = server.get_bytes(f"jobs/{job_id}/picture.png")
        head_status, _, head_body = server.get_bytes(f"jobs/{job_id}/picture.png", method="HEAD")
        data = json.loads(server.get("status.json")[2])
    finally:
        server.stop()
    escaped = "A 7 by 7 board, &#34;pegs&#34; &lt;b&gt;left&lt;/b&gt;: 12 &amp; counting"
    assert f'<img class="picture" src="/jobs/{job_id}/picture.png" alt="{escaped}">' in html
    assert "<b>left</b>" not in html
    assert status == 200 and headers["Content-Type"] == "image/png" and body == png
    assert headers["X-Content-Type-Options"] == "nosniff" and "default-src 'none'" in headers["Content-Security-Policy"]
    assert head_status == 200 and head_body == b""
    (job,) = data["jobs"]
    assert job["picture"] == f"/jobs/{job_id}/picture.png" and job["picture_alt"] == PICTURE_ALT


def test_a_job_without_a_kept_picture_shows_none_and_its_address_is_404(server: Server) -> None:
    _, _, html = server.get()
    assert "<img" not in html
    for path in ("jobs/1/picture.png", "jobs/999/picture.png", "jobs/x/picture.png", "jobs/-1/picture.png"):
        status, headers, _ = server.get_bytes(path)
        assert status == 404, path
        assert headers["X-Frame-Options"] == "DENY"


def test_a_kept_picture_needs_the_password_too(home: BotHome, made: Made, server: Server) -> None:
    job_id, png = keep_job_picture(home, made.job_name)
    for password in (None, "wrong"):
        status, headers, body = server.get_bytes(f"jobs/{job_id}/picture.png", password=password)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic") and png not in body
    status, _, body = server.get_bytes(f"jobs/{job_id}/picture.png")
    assert status == 200 and body == png
    status, headers, _ = server.get_bytes(f"jobs/{job_id}/picture.png", method="POST")
    assert status == 405 and headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
@pytest.mark.parametrize("path", ["", "status.json", "static/status.css", "nothing-here"])
def test_only_get_and_head(server: Server, method: str, path: str) -> None:
    status, headers, _ = server.get(path, method=method)
    assert status == 405
    assert headers["Allow"] == "GET, HEAD"


def test_head_answers_without_a_body(server: Server) -> None:
    status, headers, body = server.get(method="HEAD")
    assert status == 200 and body == ""


def test_security_headers_on_every_answer(server: Server) -> None:
    for path, password in (("", PASSWORD), ("status.json", PASSWORD), ("", None), ("nothing", PASSWORD)):
        _, headers, _ = server.get(path, password=password)
        policy = headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert "script-src" not in policy and "unsafe-inline" not in policy
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["X-Content-Type-Options"] == "nosniff"


def test_it_listens_on_loopback_only_by_default_and_stops_cleanly_on_sigterm(home: BotHome, made: Made) -> None:
    server = start_server(home)
    pid = server.process.pid
    listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
    port_hex = f"{server.port:04X}"
    bound = [
        line.split()[1] for line in listening if line.split()[1].endswith(f":{port_hex}") and line.split()[3] == "0A"
    ]
    assert bound == [f"0100007F:{port_hex}"], bound  # 127.0.0.1, and not 0.0.0.0
    assert server.get()[0] == 200
    returncode, stderr = server.stop()
    assert returncode == 0, stderr
    assert "status page stopped" in stderr and "Traceback" not in stderr
    assert not Path(f"/proc/{pid}").exists()


def test_any_other_host_without_a_password_is_refused_with_78(home: BotHome) -> None:
    for host in ("0.0.0.0", "::", "192.168.1.20", "pi.local"):
        result = home.run("serve", "--host", host, "--port", "0", timeout=30)
        assert result.returncode == 78, result.stderr
        assert "WEB_PASSWORD is not set" in result.stderr and f"--host {host}" in result.stderr


def test_another_host_with_a_password_starts(home: BotHome, made: Made) -> None:
    process = home.start("serve", "--host", "0.0.0.0", "--port", "0")
    try:
        line = process.stderr.readline()
        assert "status page on http://0.0.0.0:" in line and "password required" in line
    finally:
        process.terminate()
        process.communicate(timeout=15)
    assert process.returncode == 0


def test_a_missing_history_says_so(home: BotHome) -> None:
    server = start_server(home)
    try:
        status, _, html = server.get(password=None)
        data = json.loads(server.get("status.json", password=None)[2])
    finally:
        server.stop()
    assert status == 200 and "no history yet" in html
    assert data["history_problem"].startswith("no history yet")
    assert not (home.path / "state" / "history.sqlite3").exists()  # the page never creates it


@pytest.mark.parametrize(
    "damage",
    [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000, b""],
    ids=["garbage", "torn-header", "empty"],
)
def test_a_damaged_history_gives_a_page_that_says_so(home: BotHome, made: Made, damage: bytes) -> None:
    history = home.path / "state" / "history.sqlite3"
    history.write_bytes(damage)
    server = start_server(home)
    try:
        status, _, html = server.get()
        data = json.loads(server.get("status.json")[2])
    finally:
        returncode, stderr = server.stop()
    assert status == 200
    assert "The history cannot be read" in html
    assert data["history_problem"] and data["attention"][0]["kind"] == "history"
    assert "Traceback" not in stderr and returncode == 0
    assert history.read_bytes() == damage  # read-only: never repaired, moved or rewritten here


def test_a_foreign_database_is_not_taken_for_a_history(home: BotHome, made: Made) -> None:
    history = home.path / "state" / "history.sqlite3"
    history.unlink()
    with sqlite3.connect(history) as conn:
        conn.execute("CREATE TABLE runs (id INTEGER)")
    server = start_server(home)
    try:
        data = json.loads(server.get("status.json")[2])
    finally:
        server.stop()
    assert "is not a twitterbot history" in data["history_problem"]


def test_a_run_that_posts_while_the_page_is_read_exits_0_and_shows_next_time(home: BotHome, made: Made) -> None:
    history = home.path / "state" / "history.sqlite3"
    before = os.stat(history).st_mtime_ns
    server = start_server(home)
    try:
        for _ in range(5):
            assert server.get()[0] == 200
        assert os.stat(history).st_mtime_ns == before  # reading changes nothing
        run = home.start("--force")
        while run.poll() is None:
            assert server.get("status.json")[0] == 200
        run.communicate(timeout=30)
        assert run.returncode == 0
        data = json.loads(server.get("status.json")[2])
    finally:
        server.stop()
    assert data["runs"][0]["action"] == "posted"
    assert data["runs"][0]["text"] == "A line not posted yet"


def test_a_scheduled_run_and_other_commands_never_import_flask_or_waitress(home: BotHome) -> None:
    import sys

    probe = (
        "import sys; from twitterbot.cli import main; status = main(sys.argv[1:]); "
        "print(sorted(name for name in ('flask', 'waitress', 'jinja2', 'werkzeug') if name in sys.modules)); "
        "sys.exit(status)"
    )
    for args in (["--force"], ["history"], ["serve", "--help"]):
        result = subprocess.run(
            [sys.executable, "-c", probe, "--env-file", str(home.env_file), *args],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-1] == "[]", args


def test_a_port_in_use_is_a_sentence_and_78(home: BotHome, server: Server) -> None:
    result = home.run("serve", "--port", str(server.port), timeout=30)
    assert result.returncode == 78
    assert f"cannot listen on 127.0.0.1 port {server.port}" in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.stderr


def _raw(port: int, request: bytes, *, timeout: float = 5) -> bytes:
    """Send `request` as it is and read the answer until the server closes or `timeout`."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(request)
        answer = b""
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except (socket.timeout, ConnectionResetError):
            pass  # a server that refuses a request it has not read all of closes with a reset
    return answer


def _basic(password: str) -> str:
    return "Basic " + base64.b64encode(f"owner:{password}".encode()).decode()


def test_a_request_is_answered_while_110_clients_hold_unfinished_requests(server: Server) -> None:
    held = []
    try:
        for _ in range(110):
            conn = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never: finished")  # no blank line: never done
            held.append(conn)
        started = time.monotonic()
        status, _, body = server.get("status.json")
        took = time.monotonic() - started
    finally:
        for conn in held:
            conn.close()
    assert status == 200 and json.loads(body)["cap"]["limit"] == 10
    assert took < 3, f"answered after {took:.1f} s"


@pytest.mark.parametrize(
    "head",
    [
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000\r\n",
        b"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n",
        b"PUT / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n",
    ],
    ids=["a gigabyte announced", "a small body on GET", "chunked"],
)
def test_a_request_body_is_refused_before_it_is_read(server: Server, head: bytes) -> None:
    # Only the headers (and for chunked, the first chunk) are sent: the answer must not wait for the rest.
    rest = b"\r\n4\r\nabcd\r\n" if b"chunked" in head else b"\r\n"
    answer = _raw(server.port, head + f"Authorization: {_basic(PASSWORD)}\r\n".encode() + rest, timeout=5)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_headers_bigger_than_a_browser_sends_are_refused(server: Server) -> None:
    big = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 40_000 + b"\r\n\r\n"
    answer = _raw(server.port, big)
    assert answer == b"" or b" 431 " in answer.split(b"\r\n")[0], answer[:200]  # the reset may come first
    assert server.get("status.json")[0] == 200


@pytest.mark.parametrize(
    ("host", "answered"),
    [
        ("127.0.0.1:{port}", True),
        ("localhost:{port}", True),
        ("localhost", True),
        ("[::1]:{port}", True),
        ("LOCALHOST.:{port}", True),
        ("127.0.0.1", True),
        ("evil.example:{port}", False),
        ("evil.example", False),
        ("localhost.evil.example:{port}", False),
        ("127.0.0.1.nip.io:{port}", False),
        ("[::1]evil:{port}", False),
        ("", False),
    ],
)
def test_on_loopback_without_a_password_only_loopback_host_names_are_answered(
    home: BotHome, host: str, answered: bool
) -> None:
    server = start_server(home)  # no WEB_PASSWORD: the home's settings have none
    try:
        head = f"GET /status.json HTTP/1.1\r\nHost: {host.format(port=server.port)}\r\nConnection: close\r\n\r\n"
        answer = _raw(server.port, head.encode())
    finally:
        server.stop()
    if answered:
        assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    else:
        assert answer.startswith(b"HTTP/1.1 403") and b"history_file" not in answer, answer[:300]
        assert b"only to localhost, 127.0.0.1 and [::1]" in answer


def test_repeated_wrong_passwords_from_one_address_are_answered_429(server: Server) -> None:
    statuses = [server.get("status.json", password=f"guess-{number}")[0] for number in range(5)]
    assert statuses == [401] * 5
    status, headers, body = server.get("status.json", password="guess-5")
    assert status == 429 and int(headers["Retry-After"]) >= 1 and "Too many wrong passwords" in body
    # While it waits, even the right password is not looked at: guessing on cannot find it.
    status, _, body = server.get("status.json")
    assert status == 429 and PLAIN_LINE not in body


@pytest.mark.parametrize("password", ["abc", "short pass!"])
def test_off_loopback_a_password_under_12_characters_is_78(home: BotHome, password: str) -> None:
    home.write_env(WEB_PASSWORD=password)
    for host in ("0.0.0.0", "192.168.1.20"):
        result = home.run("serve", "--host", host, "--port", "0", timeout=30)
        assert result.returncode == 78, result.stderr
        assert "at least 12" in result.stderr and f"--host {host}" in result.stderr
        assert password not in result.stderr


@pytest.mark.parametrize(
    "written",
    ['"correct horse battery staple"', "correct horse battery staple", "'correct horse battery staple'"],
    ids=["double-quoted", "bare", "single-quoted"],
)
def test_a_passphrase_with_spaces_is_a_password(home: BotHome, written: str) -> None:
    home.write_env(WEB_PASSWORD=written)
    process = home.start("serve", "--host", "0.0.0.0", "--port", "0")
    try:
        line = process.stderr.readline()
        assert "status page on http://0.0.0.0:" in line and "password required" in line, line
        port = int(re.search(r":(\d+)/", line).group(1))
        page = Server(process, port)
        assert page.get("status.json", password="correct horse battery staple")[0] == 200
        assert page.get("status.json", password="correct horse battery")[0] == 401
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=15)
    assert process.returncode == 0 and "correct horse" not in stderr


def test_serve_warns_about_a_world_readable_env_file(home: BotHome, made: Made) -> None:
    home.env_file.chmod(0o644)
    server = start_server(home)  # reads what serve logs until it names its port
    server.stop()
    stderr = "".join(server.said)
    assert f"{home.env_file} holds your keys but other users can read it (mode 0644): run chmod 600" in stderr


@pytest.mark.parametrize("host", ["localhost.", "localhost", "LOCALHOST", "[127.0.0.1]", "127.0.0.1"])
def test_host_localhost_with_a_final_dot_listens_on_loopback(home: BotHome, host: str) -> None:
    server = start_server(home, "--host", host)
    try:
        assert server.get("status.json", password=None)[0] == 200
    finally:
        returncode, stderr = server.stop()
    assert returncode == 0 and "Traceback" not in stderr


@pytest.mark.parametrize("host", ["local host", "-x", "pi..local", "a" * 300, "[::1", "1.2.3.4.5"])
def test_a_host_that_is_no_address_is_a_usage_error(home: BotHome, host: str) -> None:
    result = home.run("serve", "--host", host, "--port", "0", timeout=30)
    assert result.returncode == 64, result.stderr
    assert "--host" in result.stderr and "Traceback" not in result.stderr
