"""X_MONTHLY_BUDGET: the month's spend summed from the history, a post that would pass it not sent
to X (the run warns and exits 0), and `check` showing the spend; against the X emulator."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from conftest import BotHome
from x_emulator import XEmulator

from twitterbot.networks import Fit
from twitterbot.networks.x import NETWORK as X
from twitterbot.networks.x import PRICES
from twitterbot.posting.budget import month_spend, month_start, over_budget
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
        last_month = store.begin_attempt("old", run_id=None, at=datetime(2026, 4, 30, 23, 0, tzinfo=timezone.utc), network="x", cost=1.0)
        store.finish_attempt(last_month, "posted", at=NOW)
        for text, cost in (("plain", PRICES.post), ("see example.com", None), ("free", None)):
            attempt = store.begin_attempt(text, run_id=None, at=NOW, network="x" if text != "free" else "mastodon", cost=cost)
            store.finish_attempt(attempt, "posted", at=NOW)
        failed = store.begin_attempt("failed", run_id=None, at=NOW, network="x", cost=PRICES.post)
        store.finish_attempt(failed, "failed", at=NOW)
        spend = month_spend(store, X, NOW, 1.0)
    assert month_start(NOW) == datetime(2026, 5, 1, tzinfo=timezone.utc)
    assert abs(spend.spent - (PRICES.post + PRICES.post_with_url)) < 1e-9


def test_a_link_costs_more_against_the_budget() -> None:
    with HistoryStore(":memory:") as store:
        spend = month_spend(store, X, NOW, 0.10)
    plain, linked = X.measure("hello"), X.measure("see example.com")
    assert over_budget(spend, plain, X) is None
    stopped = over_budget(spend, linked, X)
    assert stopped and "X_MONTHLY_BUDGET=$0.10" in stopped and "$0.200" in stopped
    assert over_budget(spend._replace(budget=None), linked, X) is None
    assert over_budget(spend, Fit("mastodon", 5, 500), type("Free", (), {"price": lambda self, fit: None, "label": "M"})()) is None
