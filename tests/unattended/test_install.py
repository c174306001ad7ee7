"""Crontab lines and systemd units: valid syntax, the intended times, the right paths."""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conftest import REGISTRY, REPO
from croniter import croniter
from in_process import run_in_process

from twitterbot.errors import ConfigError, UsageError
from twitterbot.settings.loading import load_config
from twitterbot.unattended.dask_units import dask_units
from twitterbot.unattended.install import (
    EXAMPLE_DIR,
    LINES_TIMER,
    REPLY_UNITS,
    TIMER,
    UNIT_NAMES,
    Paths,
    crontab,
    examples,
    systemd_units,
    unit_user,
)

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd = pytest.mark.skipif(
    SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed (apt-get install systemd)"
)


@pytest.fixture(scope="module")
def systemd_verifies(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skip, saying why, where systemd-analyze is installed but cannot verify even a unit with
    nothing wrong in it (a chroot or a container without a running systemd): what it then says is
    about the machine, not about our units."""
    folder = tmp_path_factory.mktemp("known-good")
    (folder / "known-good.service").write_text("[Service]\nType=oneshot\nExecStart=/bin/true\n")
    try:
        result = subprocess.run(
            [SYSTEMD_ANALYZE, "verify", "--man=no", str(folder / "known-good.service")],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"systemd-analyze cannot run here: {exc}")
    said = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or said:
        pytest.skip(f"systemd-analyze cannot verify units here (a unit with nothing wrong gets: {said[:300]!r})")


def config_with(tmp_path: Path, **settings: str):
    env = tmp_path / ".env"
    env.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    env.chmod(0o600)
    return load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})


def paths_for(config, project: Path, python: Path = Path(sys.executable), user: str = "pi") -> Paths:
    return Paths.for_checkout(config, python=python, user=user, project_dir=project)


def cron_jobs(text: str) -> list:
    """The job lines of a crontab, split into (schedule, command); comments and blanks skipped."""
    jobs = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split(None, 5)
        assert len(fields) == 6, f"not a crontab job line: {line!r}"
        jobs.append((" ".join(fields[:5]), fields[5]))
    return jobs


def fire_times(jobs: list, day: datetime) -> list:
    times = set()
    for expression, _ in jobs:
        assert croniter.is_valid(expression), expression
        walker = croniter(expression, day - timedelta(seconds=1))
        while (moment := walker.get_next(datetime)) < day.replace(hour=23, minute=59, second=59):
            times.add(moment.strftime("%H:%M"))
    return sorted(times)


# -- cron ----------------------------------------------------------------------------------------


def test_crontab_example_fires_at_the_originals_four_times() -> None:
    jobs = cron_jobs((REPO / "crontab.example").read_text())
    assert fire_times(jobs, datetime(2026, 11, 22)) == ["00:00", "06:00", "12:00", "18:00"]
    ((_, command),) = jobs
    assert command.startswith(
        "/usr/bin/flock -n /home/pi/twitterbot/state/cron.lock /home/pi/twitterbot/.venv/bin/python /home/pi/twitterbot/bot.py"
    )
    assert command.endswith(">> /home/pi/twitterbot/state/cron.log 2>&1")
    assert "%" not in command  # cron would turn it into a new line


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ("08:30", ["08:30"]),
        ("07:15,19:45", ["07:15", "19:45"]),
        ("00:00,06:00,12:30,18:00", ["00:00", "06:00", "12:30", "18:00"]),
    ],
)
def test_generated_cron_lines_fire_at_tweet_times(tmp_path: Path, times: str, expected: list) -> None:
    config = config_with(tmp_path, TWEET_TIMES=times)
    text = crontab(config, paths_for(config, tmp_path))
    assert fire_times(cron_jobs(text), datetime(2027, 3, 28)) == expected
    for _, command in cron_jobs(text):
        assert f"{sys.executable} {tmp_path / 'bot.py'} -q" in command


def test_cron_lines_ask_the_run_for_the_same_jitter_as_the_timer_and_the_daemon(tmp_path: Path) -> None:
    # Cron cannot wait a random time itself (its sh may have no $RANDOM): the run waits a random
    # 0..TWEET_JITTER, read at each run, before it takes the lock (tests/test_cli.py runs it).
    for jitter in ("0", "10m"):
        config = config_with(tmp_path, TWEET_TIMES="07:15,19:45", TWEET_JITTER=jitter)
        jobs = cron_jobs(crontab(config, paths_for(config, tmp_path)))
        assert len(jobs) == 2
        assert all(f"{tmp_path / 'bot.py'} -q --jitter >>" in command for _, command in jobs)


def test_no_example_keeps_the_same_random_delay_every_day() -> None:
    for relative, text in examples(REGISTRY).items():
        assert "FixedRandomDelay" not in text, relative
    ((_, command),) = cron_jobs((REPO / "crontab.example").read_text())
    assert " --jitter " in command


def test_cron_lines_pass_a_non_default_env_file(tmp_path: Path) -> None:
    other = tmp_path / "conf"
    other.mkdir()
    (other / "bot.env").write_text("TWEET_TIMES=09:00\n")
    config = load_config(REGISTRY, project_dir=tmp_path, env_file=other / "bot.env", environ={})
    ((_, command),) = cron_jobs(crontab(config, paths_for(config, tmp_path)))
    assert f"--env-file {other / 'bot.env'}" in command
    assert str(other / "state" / "cron.lock") in command


def test_cron_cannot_do_seconds(tmp_path: Path) -> None:
    config = config_with(tmp_path, TWEET_TIMES="06:00:30")
    with pytest.raises(ConfigError, match="cron starts jobs on the minute"):
        crontab(config, paths_for(config, tmp_path))


def test_paths_with_spaces_are_quoted(tmp_path: Path) -> None:
    project = tmp_path / "my bot"
    project.mkdir()
    config = load_config(REGISTRY, project_dir=project, environ={})
    ((_, command),) = cron_jobs(crontab(config, paths_for(config, project)))
    assert f"'{project / 'bot.py'}'" in command


def test_the_cron_command_prints_lines_for_this_checkout(tmp_path: Path) -> None:
    env = tmp_path / "bot.env"
    env.write_text("TWEET_TIMES=05:10\n")
    result = subprocess.run(
        [sys.executable, str(REPO / "bot.py"), "cron", "--env-file", str(env)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    ((expression, command),) = cron_jobs(result.stdout)
    assert expression == "10 5 * * *"
    assert f"{sys.executable} {REPO / 'bot.py'} --env-file {env} -q" in command
    assert (tmp_path / "state").is_dir()  # so flock and the log have a folder


# -- the repository's examples --------------------------------------------------------------------


def test_the_examples_are_the_generators_output() -> None:
    for relative, text in examples(REGISTRY).items():
        assert (REPO / relative).read_text() == text, f"{relative} is stale: run python docs/gen_reference.py"


def test_systemd_examples_cover_every_unit() -> None:
    assert sorted(path.name for path in (REPO / "systemd").iterdir()) == sorted(UNIT_NAMES + REPLY_UNITS)


# -- systemd -------------------------------------------------------------------------------------


def verify(folder: Path, user: bool) -> None:
    """systemd-analyze verify exits 0 even on unknown keys: any output at all is a failure."""
    env = dict(os.environ)
    command = [SYSTEMD_ANALYZE, "verify", "--man=no"]
    # A short runtime folder of its own: the user units' sockets under it (gpg-agent's) must fit in
    # a socket address's 108 bytes, which a deep tmp_path (pytest-xdist's popen-gwN/...) does not.
    with tempfile.TemporaryDirectory(prefix="xdg-") as runtime:
        if user:
            env["XDG_RUNTIME_DIR"] = runtime
            command.insert(1, "--user")
        names = sorted(str(path) for path in folder.iterdir())
        result = subprocess.run(command + names, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), (
        result.stdout + result.stderr
    )


@needs_systemd
def test_the_example_units_verify(tmp_path: Path, systemd_verifies: None) -> None:
    # The examples name /home/pi/twitterbot; verify them as they would stand in such a checkout.
    project = tmp_path / "twitterbot"
    (project / ".venv/bin").mkdir(parents=True)
    (project / ".venv/bin/python").symlink_to(sys.executable)
    (project / "state").mkdir()
    shutil.copy(REPO / "bot.py", project)
    units = tmp_path / "units"
    units.mkdir()
    for name in UNIT_NAMES + REPLY_UNITS:
        text = (REPO / "systemd" / name).read_text().replace(str(EXAMPLE_DIR), str(project))
        (units / name).write_text(text)
    verify(units, user=False)


@needs_systemd
@pytest.mark.parametrize("system", [True, False], ids=["system", "user"])
def test_generated_units_verify(tmp_path: Path, system: bool, systemd_verifies: None) -> None:
    config = config_with(
        tmp_path,
        TWEET_TIMES="07:30,21:00:15",
        TWEET_TIMEZONE="Europe/London",
        TWEET_JITTER="10m",
        LOG_FILE=str(tmp_path / "logs" / "bot.log"),
    )
    config["BOT_STATE_DIR"].mkdir()
    (tmp_path / "logs").mkdir()
    units = systemd_units(config, paths_for(config, tmp_path, user="root"), system=system)
    folder = tmp_path / "units"
    folder.mkdir()
    for name, text in units.items():
        (folder / name).write_text(text)
    verify(folder, user=not system)


def test_units_say_what_they_should(tmp_path: Path) -> None:
    config = config_with(tmp_path, TWEET_TIMES="07:30,21:00", TWEET_TIMEZONE="Europe/London", TWEET_JITTER="10m")
    units = systemd_units(config, paths_for(config, tmp_path), system=True)
    timer, service, daemon = units["twitterbot.timer"], units["twitterbot.service"], units["twitterbot-daemon.service"]
    assert "OnCalendar=*-*-* 07:30:00 Europe/London\nOnCalendar=*-*-* 21:00:00 Europe/London" in timer
    assert "Persistent=false" in timer and "RandomizedDelaySec=600\n" in timer
    assert "FixedRandomDelay" not in timer  # a new delay each time, as cron --jitter and the daemon draw
    assert "Type=oneshot" in service and "User=pi" in service
    assert f"ExecStart={sys.executable} {tmp_path / 'bot.py'}\n" in service
    assert f"ReadWritePaths={config['BOT_STATE_DIR']}\n" in service and "ProtectSystem=strict" in service
    assert "After=network-online.target time-sync.target" in service
    assert (
        "Type=notify" in daemon
        and "Restart=on-failure" in daemon
        and "RestartPreventExitStatus=64 65 69 77 78" in daemon
    )
    assert f"{tmp_path / 'bot.py'} daemon" in daemon
    user_units = systemd_units(config, paths_for(config, tmp_path), system=False)
    assert (
        "User=" not in user_units["twitterbot.service"]
        and "WantedBy=default.target" in user_units["twitterbot-daemon.service"]
    )


def test_systemd_write_puts_user_units_in_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = tmp_path / "bot.env"
    env.write_text("TWEET_TIMES=10:00\n")
    result = subprocess.run(
        [sys.executable, str(REPO / "bot.py"), "systemd", "--write", "--env-file", str(env)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    folder = home / ".config/systemd/user"
    assert sorted(path.name for path in folder.iterdir()) == sorted(UNIT_NAMES)
    assert "OnCalendar=*-*-* 10:00:00" in (folder / "twitterbot.timer").read_text()
    assert (
        "loginctl enable-linger" in result.stdout and "systemctl --user enable --now twitterbot.timer" in result.stdout
    )


# -- who system units run as ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "current", "sudo_user", "expected"),
    [
        (None, "pi", "", "pi"),  # no sudo: you
        (None, "root", "pi", "pi"),  # sudo: the user who ran it, not root
        ("bot", "root", "pi", "bot"),  # --run-as wins
        ("root", "root", "", "root"),  # root only when asked by name
        (None, "pi", "alice", "pi"),  # SUDO_USER left over from `sudo -u pi`: you are pi
    ],
)
def test_system_units_run_as_the_user_who_ran_sudo(requested, current: str, sudo_user: str, expected: str) -> None:
    environ = {"SUDO_USER": sudo_user} if sudo_user else {}
    assert unit_user(requested, system=True, current=current, environ=environ) == expected


@pytest.mark.parametrize("sudo_user", ["", "root"])
def test_system_units_never_run_as_root_by_accident(sudo_user: str) -> None:
    with pytest.raises(UsageError, match="would run as root: give --run-as USER"):
        unit_user(None, system=True, current="root", environ={"SUDO_USER": sudo_user})


def test_user_units_under_sudo_are_refused_not_written_into_roots_home() -> None:
    with pytest.raises(UsageError, match="without sudo.*or add --system"):
        unit_user(None, system=False, current="root", environ={"SUDO_USER": "pi"})
    assert unit_user(None, system=False, current="root", environ={}) is None  # root's own, knowingly


@pytest.mark.skipif(os.getuid() != 0, reason="shows what sudo does: needs to run as root")
def test_a_state_folder_made_under_sudo_belongs_to_the_user_the_units_run_as(tmp_path: Path) -> None:
    (tmp_path / "bot.env").write_text(f"TWEET_TIMES=10:00\nBOT_STATE_DIR={tmp_path / 'state'}\n")
    result = subprocess.run(
        [sys.executable, str(REPO / "bot.py"), "systemd", "--env-file", str(tmp_path / "bot.env"), "--system"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SUDO_USER": "nobody"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "state").stat().st_uid == pwd.getpwnam("nobody").pw_uid
    assert "gave it to nobody" in result.stderr


def test_the_daemon_unit_reloads_with_sighup() -> None:
    daemon = examples(REGISTRY)["systemd/twitterbot-daemon.service"]
    assert "ExecReload=/bin/kill -HUP $MAINPID" in daemon


def test_run_as_without_system_is_a_usage_error() -> None:
    assert unit_user(None, system=False, current="pi", environ={}) is None
    with pytest.raises(UsageError, match="add --system"):
        unit_user("pi", system=False, current="pi", environ={})


def run_systemd_command(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`bot.py systemd ARGS` in this process, from `tmp_path`, with a bare environment (the cron
    and systemd --write tests above start bot.py as a process)."""
    (tmp_path / "bot.env").write_text("TWEET_TIMES=10:00\n")
    return run_in_process(
        ["systemd", "--env-file", str(tmp_path / "bot.env"), *args],
        environ={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
        cwd=tmp_path,
    )


def test_the_systemd_command_refuses_run_as_without_system(tmp_path: Path) -> None:
    result = run_systemd_command(tmp_path, "--run-as", "pi")
    assert result.returncode == 64 and "--run-as" in result.stderr and "--system" in result.stderr
    assert result.stdout == ""


def test_the_systemd_command_writes_the_user_asked_for(tmp_path: Path) -> None:
    result = run_systemd_command(tmp_path, "--system", "--run-as", "pi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("User=pi\n") == 3  # the oneshot service, the daemon and the status page


@pytest.mark.skipif(os.getuid() != 0, reason="shows what sudo does: needs to run as root")
def test_the_systemd_command_under_sudo_takes_the_user_from_sudo(tmp_path: Path) -> None:
    result = run_systemd_command(tmp_path, "--system", SUDO_USER="pi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("User=pi\n") == 3 and "User=root" not in result.stdout
    assert "running under sudo: the units will run as pi" in result.stderr
    as_root = run_systemd_command(tmp_path, "--system")
    assert as_root.returncode == 64 and "would run as root" in as_root.stderr and as_root.stdout == ""
    explicit = run_systemd_command(tmp_path, "--system", "--run-as", "root")
    assert explicit.returncode == 0 and "User=root\n" in explicit.stdout


def test_the_status_page_unit_serves_on_loopback_and_stops_on_sigterm() -> None:
    web = examples(REGISTRY)["systemd/twitterbot-web.service"]
    assert "ExecStart=/home/pi/twitterbot/.venv/bin/python /home/pi/twitterbot/bot.py serve\n" in web
    assert "--host" not in web.split("ExecStart=", 1)[1].split("\n", 1)[0]  # 127.0.0.1 unless the owner opens it
    assert "KillSignal" not in web and "RestartPreventExitStatus=64 65 69 77 78" in web  # 78: a host without a password


def test_the_timer_and_the_cron_lines_wake_for_one_off_lines_and_say_when_runs_come(tmp_path: Path) -> None:
    tweets = tmp_path / "tweets.txt"
    tweets.write_text(
        "{at: 2099-12-31 23:59} New year\n{at: 2099-06-01 03:30} Night owl\n{at: 2000-01-01 00:00} Past\nplain\n"
    )
    config = config_with(
        tmp_path, TWEET_TIMES="00:00,12:00", TWEET_TIMEZONE="Europe/London", TWEETS_FILE=str(tweets), TWEET_JITTER="3h"
    )
    paths = Paths.for_checkout(config, python=Path("/usr/bin/python3"), user="pi", project_dir=tmp_path)
    units = systemd_units(config, paths, system=False)
    timer = units[LINES_TIMER]  # a timer of its own, with no random delay: a one-off goes at its time
    assert "RandomizedDelaySec=10800" in units[TIMER] and "RandomizedDelaySec" not in timer
    assert "2099" not in units[TIMER] and "Unit=twitterbot-lines.service" in timer
    assert units["twitterbot-lines.service"].split("ExecStart=")[1].startswith("/usr/bin/python3 ")
    assert " --one-offs\n" in units["twitterbot-lines.service"]
    assert "OnCalendar=2099-12-31 23:59:00 Europe/London" in timer and "OnCalendar=2099-06-01 03:30:00" in timer
    assert "2000-01-01" not in timer  # its time has passed
    assert (
        "line 2 {at: 2099-06-01 03:30} falls between the runs of TWEET_TIMES: the first after it comes 8h30m later"
        in timer
    )
    assert "later than LATE_BY=1h: without the run below it is missed" in timer
    assert (
        "line 1 {at: 2099-12-31 23:59} falls between the runs of TWEET_TIMES: the first after it comes 1m later\n"
        in timer
    )
    lines = [line for line in crontab(config, paths).splitlines() if not line.startswith("#")]
    assert len(lines) == 3  # one for both times, one per one-off
    assert "--jitter" in lines[0] and all("--one-offs" in line and "--jitter" not in line for line in lines[1:])
    assert all("cron-lines.lock" in line for line in lines[1:])  # a run waiting its jitter holds cron.lock


def test_with_reply_rules_the_units_and_cron_answer_mentions_every_few_minutes(tmp_path: Path) -> None:
    config = config_with(tmp_path, REPLY_RULES=str(tmp_path / "replies.json"))
    units = systemd_units(config, paths_for(config, tmp_path), system=True)
    assert "OnCalendar=*:0/5" in units["twitterbot-replies.timer"]
    assert f"{tmp_path / 'bot.py'} replies\n" in units["twitterbot-replies.service"]
    table = crontab(config, paths_for(config, tmp_path))
    assert f"*/5 * * * * /usr/bin/flock -n {tmp_path / 'state' / 'cron-replies.lock'} " in table  # never skips a post
    plain = config_with(tmp_path)
    assert set(systemd_units(plain, paths_for(plain, tmp_path), system=True)) == set(UNIT_NAMES)
    assert "\n*/5 " not in crontab(plain, paths_for(plain, tmp_path))


def as_cron_runs(command: str) -> str:
    """What cron hands /bin/sh of a crontab command: cut at the first unescaped % (the rest is
    standard input), each \\% read as %."""
    out, index = [], 0
    while index < len(command):
        char = command[index]
        if char == "\\" and command[index + 1 : index + 2] == "%":
            out.append("%")
            index += 2
            continue
        if char == "%":
            break
        out.append(char)
        index += 1
    return "".join(out)


ODD_FOLDER = "50% my bot %h"  # a percent, spaces, and what systemd would read as a specifier


def test_cron_lines_run_whole_from_a_folder_with_a_percent_and_a_space(tmp_path: Path) -> None:
    project = tmp_path / ODD_FOLDER
    (project / ".venv/bin").mkdir(parents=True)
    called = tmp_path / "called.txt"
    python = project / ".venv/bin/python"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(called))}\n')
    python.chmod(0o755)
    tweets = project / "tweets.txt"
    tweets.write_text("{at: 2099-12-31 23:59} New year\nplain\n")
    config = config_with(project, TWEETS_FILE=str(tweets))
    config["BOT_STATE_DIR"].mkdir()
    table = crontab(config, paths_for(config, project, python=python))
    jobs = [command for _when, command in cron_jobs(table)]
    assert len(jobs) == 2 and all("\\%" in job for job in jobs)
    for job, args in zip(jobs, (["-q", "--jitter"], ["-q", "--one-offs"])):
        called.unlink(missing_ok=True)
        ran = subprocess.run(["/bin/sh", "-c", as_cron_runs(job)], capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert called.read_text().splitlines() == [str(project / "bot.py"), *args]
    assert (project / "state" / "cron.log").exists()


@needs_systemd
@pytest.mark.parametrize("system", [True, False], ids=["system", "user"])
def test_units_verify_for_a_folder_with_a_percent_and_a_space(
    tmp_path: Path, system: bool, systemd_verifies: None
) -> None:
    project = tmp_path / ODD_FOLDER
    (project / ".venv/bin").mkdir(parents=True)
    (project / ".venv/bin/python").symlink_to(sys.executable)
    (project / "README.md").write_text("readme\n")
    tweets = project / "tweets.txt"
    tweets.write_text("{at: 2099-12-31 23:59} New year\nplain\n")
    logs = tmp_path / "my logs"
    config = config_with(project, TWEETS_FILE=str(tweets), TWEET_JITTER="1h", LOG_FILE=str(logs / "bot.log"))
    config["BOT_STATE_DIR"].mkdir()
    logs.mkdir()
    units = systemd_units(
        config, paths_for(config, project, python=project / ".venv/bin/python", user="root"), system=system
    )
    assert "twitterbot-lines.timer" in units
    if system:
        assert (
            f'ReadWritePaths="{str(project).replace("%", "%%")}/state" "{logs}"\n'
            in units[TIMER.replace("timer", "service")]
        )
    assert "%%h" in units["twitterbot.service"] and "my%%20bot" in units["twitterbot.service"]
    (project / ".venv/bin/dask").symlink_to("/bin/true")
    units.update(
        dask_units(config, paths_for(config, project, python=project / ".venv/bin/python", user="root"), system=system)
    )
    folder = tmp_path / "units"
    folder.mkdir()
    for name, text in units.items():
        (folder / name).write_text(text)
    verify(folder, user=not system)
