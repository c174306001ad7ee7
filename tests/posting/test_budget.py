"""X_MONTHLY_BUDGET: the month's spend summed from the history, a post that would pass it not sent
to X (the run warns and exits 0), and `check` showing the spend; against the X emulator."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from conftest import REGISTRY, BotHome
from hypothesis import example, given
from hypothesis import strategies as st
from x_emulator import XEmulator

from twitterbot.delivery.budget import month_spend, month_start, next_month, over_budget
from twitterbot.delivery.deliver import Delivery, DeliveryRules
from twitterbot.errors import ConfigError
from twitterbot.networks.x import NETWORK as X
from twitterbot.networks.x import PRICES
from twitterbot.networks.x.poster import XPoster
from twitterbot.posting.catchup import catch_up
from twitterbot.progress.session import JobSettings, open_reporter
from twitterbot.settings.loading import load_config
from twitterbot.settings.secrets import Scrubber
from twitterbot.state.outcomes import Ending, Outcome
from twitterbot.state.store import HistoryStore

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=timezone.utc)


def test_a_post_that_would_pass_the_budget_is_not_sent_to_x(home: BotHome, emulator: XEmulator) -> None:
    home.write_env(X_MONTHLY_BUDGET=f"{2 * PRICES.post:.3f}", MIN_POST_GAP="0")
    home.write_tweets("one\ntwo\nthree\nfour\n")
    for _ in range(2):
        assert home.run("--force").returncode == 0
    third = home.run("--force", "--json")
    assert third.returncode == 0
    report = json.loads(third.stdout)
    assert report["action"] == "skipped"
    assert report["networks"][0]["outcome"] == "over_budget"
    assert "X_MONTHLY_BUDGET=$0.03" in third.stderr and "$0.03 spent this month" in third.stderr
    assert "WARNING" in third.stderr
    assert len(emulator.texts) == 2
    checked = home.run("check")
    assert "X posts this month" in checked.stdout and "$0.03 of X_MONTHLY_BUDGET=$0.03" in checked.stdout


def test_check_shows_the_spend_without_a_budget(home: BotHome, emulator: XEmulator) -> None:
    assert home.run("--force").returncode == 0
    checked = home.run("check")
    assert f"${PRICES.post:.2f} (X_MONTHLY_BUDGET not set: no cap)" in checked.stdout


def test_the_spend_counts_this_months_posts_and_prices_old_rows_by_their_text() -> None:
    with HistoryStore(":memory:") as store:
        last_month = store.begin_attempt(
            "old", run_id=None, at=datetime(2026, 4, 30, 23, 0, tzinfo=timezone.utc), network="x", cost=1.0
        )
        store.finish_attempt(last_month, Ending("posted", NOW))
        for text, cost in (("plain", PRICES.post), ("see example.com", None), ("free", None)):
            attempt = store.begin_attempt(
                text, run_id=None, at=NOW, network="x" if text != "free" else "mastodon", cost=cost
            )
            store.finish_attempt(attempt, Ending("posted", NOW))
        failed = store.begin_attempt("failed", run_id=None, at=NOW, network="x", cost=PRICES.post)
        store.finish_attempt(failed, Ending("failed", NOW))
        spend = month_spend(store, X, NOW, 1.0)
    assert month_start(NOW) == datetime(2026, 5, 1, tzinfo=timezone.utc)
    assert next_month(NOW) == datetime(2026, 6, 1, tzinfo=timezone.utc)
    assert next_month(datetime(2026, 12, 31, 23, 0, tzinfo=timezone.utc)) == datetime(2027, 1, 1, tzinfo=timezone.utc)
    assert abs(spend.spent - (PRICES.post + PRICES.post_with_url)) < 1e-9


def test_a_link_costs_more_against_the_budget() -> None:
    with HistoryStore(":memory:") as store:
        spend = month_spend(store, X, NOW, 0.10)
    plain, linked = X.measure("hello"), X.measure("see example.com")
    assert over_budget(spend, X.price(plain), X) is None
    stopped = over_budget(spend, X.price(linked), X)
    assert stopped and "X_MONTHLY_BUDGET=$0.10" in stopped and "$0.200" in stopped
    assert over_budget(spend._replace(budget=None), X.price(linked), X) is None
    assert over_budget(spend, None, X) is None  # a free network: nothing to hold


def _missed_on_x(store: HistoryStore, at: datetime) -> None:
    """A post that went to Mastodon while X failed for a passing reason: a catch-up is owed to X."""
    run = store.begin_run(at=at, one_in=1, roll=1, forced=False, dry_run=False)
    first = store.begin_attempt("caught up later", run_id=run, at=at, network="mastodon")
    store.finish_attempt(first, Ending("posted", at, post_id="1", mark_used=True))
    missed = store.begin_attempt("caught up later", run_id=run, at=at, network="x", group=first)
    store.finish_attempt(missed, Ending("temporary", at, detail="X is down (503)"))


def test_a_catch_up_that_would_pass_the_budget_is_not_sent_to_x(
    tmp_path, emulator: XEmulator, poster: XPoster, caplog
) -> None:
    now = datetime.now(timezone.utc)  # the emulator's rate limits run on real time
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        _missed_on_x(store, now - timedelta(hours=1))
        run = store.begin_run(at=now, one_in=1, roll=1, forced=False, dry_run=False)
        outlets = {X: poster}

        def delivery(budget: float) -> Delivery:
            return Delivery(store, lambda: outlets, lambda: now, Scrubber(()), DeliveryRules({"x": budget}), run_id=run)

        held = catch_up(delivery(PRICES.post / 2), now - timedelta(days=1), None, REGISTRY.names())
        assert [(sent.network.name, sent.outcome) for sent in held] == [("x", Outcome.OVER_BUDGET)]
        assert emulator.texts == []
        warned = [record for record in caplog.records if record.levelname == "WARNING"]
        assert any("X_MONTHLY_BUDGET=$0.01" in record.getMessage() for record in warned)
        # A budget with room sends it, and keeps what it cost.
        went = catch_up(delivery(1.0), now - timedelta(days=1), None, REGISTRY.names())
        assert [sent.outcome for sent in went] == [Outcome.POSTED] and emulator.texts == ["caught up later"]
        assert store.costs_since("x", now - timedelta(days=1)) == [(PRICES.post, "caught up later")]


def test_a_job_s_post_that_would_pass_the_budget_is_not_sent_to_x(tmp_path, emulator: XEmulator, caplog) -> None:
    env = tmp_path / ".env"
    lines = [f"{k}={v}" for k, v in emulator.env().items()]
    env.write_text("\n".join([*lines, f"X_MONTHLY_BUDGET={PRICES.post:.3f}", "PROGRESS_EVERY=1m"]) + "\n")
    config = load_config(REGISTRY, project_dir=tmp_path, env_file=env, environ={})
    clock = [datetime.now(timezone.utc)]
    with open_reporter("pegs", config=config, job=JobSettings(first_after=0), clock=lambda: clock[0]) as report:
        assert report.update("level 1").action == "posted"
        clock[0] += timedelta(minutes=2)
        held = report.update("level 2")
        assert held.action == Outcome.OVER_BUDGET and "X_MONTHLY_BUDGET" in held.reason
        assert report.update("level 3").action == "waiting"  # not before next month: no warning each tick
        report.done("solved")
    assert emulator.texts == ["pegs: level 1 (0s)"]
    warned = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert any("pegs: not sent to X" in said and f"{PRICES.post:.2f} spent this month" in said for said in warned)


def _dollars(text: str):
    return REGISTRY.parser("X_MONTHLY_BUDGET")(
        "X_MONTHLY_BUDGET", text, ".env line 3", None, REGISTRY.settings["X_MONTHLY_BUDGET"]
    )


@given(st.floats(min_value=0, max_value=1e8), st.sampled_from(["{:g}", "${:.2f}", " {:.3f} ", "$ {}"]))
def test_an_amount_of_dollars_reads_back(amount: float, form: str) -> None:
    text = form.format(amount)
    assert _dollars(text) == float(text.strip().removeprefix("$").strip())


@given(st.text(max_size=40))
@example("-1")
@example("nan")
@example("inf")
@example("1e9")
@example("$")
@example("000000000001000000000")
def test_any_text_is_an_amount_no_budget_or_an_error_naming_the_setting(text: str) -> None:
    try:
        amount = _dollars(text)
    except ConfigError as exc:
        assert "X_MONTHLY_BUDGET" in str(exc) and ".env line 3" in str(exc) and "12.50" in str(exc)
        assert len(text.strip()) <= 20 or repr(text.strip()) not in str(exc)  # never more than 20 characters of it
        return
    assert amount is None or 0 <= amount < 1e9
    assert (amount is None) == (text.strip().removeprefix("$").strip() == "")


def test_a_catch_up_that_no_longer_fits_is_recorded_once_and_never_sent(tmp_path, emulator: XEmulator, poster) -> None:
    """A post X missed whose text X no longer takes (its rule changed, say) is not sent: the run
    records it as too long there, so the next runs do not offer it again for 24 hours."""
    now = datetime.now(timezone.utc)
    too_long = "word " * 80  # 400 characters: more than X's 280
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        run = store.begin_run(at=now, one_in=1, roll=1, forced=False, dry_run=False)
        first = store.begin_attempt(too_long, run_id=run, at=now, network="mastodon")
        store.finish_attempt(first, Ending("posted", now, post_id="1", mark_used=True))
        missed = store.begin_attempt(too_long, run_id=run, at=now, network="x", group=first)
        store.finish_attempt(missed, Ending("temporary", now, detail="X is down (503)"))
        delivery = Delivery(store, lambda: {X: poster}, lambda: now, Scrubber(()), run_id=run)
        since = now - timedelta(days=1)
        held = catch_up(delivery, since, None, REGISTRY.names())
        assert [(sent.network.name, sent.outcome) for sent in held] == [("x", Outcome.TOO_LONG)]
        assert emulator.texts == [] and store.catch_ups(since, ("x",)) == []  # recorded: not offered again
