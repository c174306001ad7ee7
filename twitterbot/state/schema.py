"""The history file's schema and its migrations: what a new file is made of, what each schema
version must hold, and how an older file is brought up to date. Each migration is one
all-or-nothing step, and `user_version` says how far a file got, so a history written by any
earlier release opens and keeps working (tests/fixtures/state holds one)."""

from __future__ import annotations

import sqlite3

from ..errors import HistoryError

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "TABLES", "check_and_migrate", "column", "create_script"]

APPLICATION_ID = 0x54574254  # "TWBT": marks the file as ours, so a foreign database is refused

# Schema 1, as the first files were made; the migrations below bring it up to date (tweet_id is
# post_id since schema 4).
_SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    one_in INTEGER,
    roll INTEGER,
    forced INTEGER NOT NULL DEFAULT 0,
    dry_run INTEGER NOT NULL DEFAULT 0,
    action TEXT NOT NULL,          -- running, posted, uncertain, would_post, skipped, failed, interrupted
    reason TEXT,
    text TEXT,
    tweet_id TEXT
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE TABLE attempts (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs (id),
    source TEXT NOT NULL DEFAULT 'scheduled',
    text TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    finished_at TEXT,
    outcome TEXT NOT NULL,         -- pending, posted, uncertain, duplicate, failed, interrupted
    tweet_id TEXT,
    detail TEXT
);
CREATE INDEX attempts_sent_at ON attempts (sent_at);
-- The shuffle bag: texts already posted in the current round.
CREATE TABLE bag (
    text TEXT PRIMARY KEY,
    used_at TEXT NOT NULL
);
"""

# Before schema 4 an attempt kept only its error's message. The failures whose message says the keys,
# token or password were refused (as X, Mastodon and Bluesky word it: "rejected the keys", 401,
# "unauthorized", "invalid token") were that kind, so migration 4 gives them the kind, and a reader
# of an older file reckons it the same way.
_KEYS_REFUSED_BEFORE_4 = (
    "(detail LIKE '%rejected the keys%' OR detail LIKE '%rejected the token%'"
    " OR detail LIKE '%rejected the app password%' OR detail LIKE '%401%' OR detail LIKE '%unauthorized%'"
    " OR detail LIKE '%unauthorised%' OR detail LIKE '%invalid%token%' OR detail LIKE '%invalid%password%')"
)

# Schema changes, applied in order to new and old files alike: user_version says how far a file got.
_MIGRATIONS = {
    2: """
-- Progress jobs: what a reporter needs to continue a run's thread after a restart.
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    run_key TEXT,                  -- the job's own id for this run, if it has one
    started_at TEXT NOT NULL,
    finished_at TEXT,
    outcome TEXT,                  -- NULL while running, then done or failed
    thread_root TEXT,              -- the id of the run's first post; later posts reply to it
    last_post_at TEXT,
    last_text TEXT,
    last_news TEXT,                -- the message and fields of the last post, to skip repeats
    posts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_name ON jobs (name, run_key);
ALTER TABLE attempts ADD COLUMN job_id INTEGER REFERENCES jobs (id);
""",
    3: """
-- Several networks: each attempt names its network, and the attempts that carry one post (a pick,
-- or a job's post) to every network share post_group, the id of the first of them.
ALTER TABLE attempts ADD COLUMN network TEXT NOT NULL DEFAULT 'x';
ALTER TABLE attempts ADD COLUMN post_group INTEGER;
CREATE INDEX attempts_post_group ON attempts (post_group, network);
-- The post's public link, in its network's own form (X's can be made from the id; others not).
ALTER TABLE attempts ADD COLUMN url TEXT;
ALTER TABLE runs ADD COLUMN url TEXT;
-- A progress job's thread on each network: the id of its first post there.
CREATE TABLE job_threads (
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    network TEXT NOT NULL,
    thread_root TEXT NOT NULL,
    PRIMARY KEY (job_id, network)
);
INSERT INTO job_threads (job_id, network, thread_root) SELECT id, 'x', thread_root FROM jobs WHERE thread_root IS NOT NULL;
""",
    4: f"""
-- A post's id on whichever network took it.
ALTER TABLE runs RENAME COLUMN tweet_id TO post_id;
ALTER TABLE attempts RENAME COLUMN tweet_id TO post_id;
-- The kind of the error that ended a run or an attempt (an ErrorKind value, or a BotError's kind):
-- what --json calls "error". NULL: no error, or a row written before schema 4.
ALTER TABLE runs ADD COLUMN error_kind TEXT;
ALTER TABLE attempts ADD COLUMN error_kind TEXT;
UPDATE attempts SET error_kind = 'unauthorized' WHERE outcome = 'failed' AND {_KEYS_REFUSED_BEFORE_4};
""",
    5: """
-- What a later run needs to look an uncertain post up on its network: the key the post was sent
-- with (Bluesky's record key, Mastodon's Idempotency-Key), the text as sent when it differs from
-- the line (a line's pictures are not part of the post's text), and how the look-up settled it.
ALTER TABLE attempts ADD COLUMN lookup_key TEXT;
ALTER TABLE attempts ADD COLUMN sent_text TEXT;
ALTER TABLE attempts ADD COLUMN settled TEXT;  -- e.g. "uncertain → posted (found by record key)"
""",
    6: """
-- What sending a post cost on its network, in US dollars (its price when sent), for a monthly
-- budget. NULL: the network is free, or the row was written before schema 6.
ALTER TABLE attempts ADD COLUMN cost REAL;
-- The alerts sent and not settled since: one per problem until a success settles it.
CREATE TABLE alerts (
    problem TEXT PRIMARY KEY,      -- "run", "job:<name>", "keys:<network>", ...
    sent_at TEXT NOT NULL,
    message TEXT
);
""",
    7: """
-- A line too long for a network, posted there as a thread (LONG_LINES=thread): its parts, as cut
-- when it was first sent, so a later run finishes it as it began; each part's attempts carry
-- thread_id, and the part keeps its last attempt.
CREATE TABLE threads (
    id INTEGER PRIMARY KEY,
    post_group INTEGER NOT NULL,   -- the post's group: its attempts on every network
    network TEXT NOT NULL,
    text TEXT NOT NULL,            -- the line as recorded (its attempts' text)
    language TEXT,
    spoiler TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,              -- NULL while parts are left to send
    stopped TEXT                   -- why it ended before its last part, if it did
);
CREATE INDEX threads_open ON threads (finished_at, started_at);
CREATE TABLE thread_parts (
    thread_id INTEGER NOT NULL REFERENCES threads (id),
    part INTEGER NOT NULL,         -- 1, 2, ...
    text TEXT NOT NULL,            -- what is sent
    attempt_id INTEGER REFERENCES attempts (id),
    PRIMARY KEY (thread_id, part)
);
ALTER TABLE attempts ADD COLUMN thread_id INTEGER REFERENCES threads (id);
""",
    8: """
-- Each part of a thread is an attempt like any other: the part it carried (NULL: a whole post),
-- its own text as sent (a later run looks it up by it) and its own price. MAX_POSTS_PER_DAY
-- counts a thread's parts as the posts they are. Earlier thread attempts get their part and text.
ALTER TABLE attempts ADD COLUMN part INTEGER;
UPDATE attempts SET
    part = (SELECT p.part FROM thread_parts p WHERE p.thread_id = attempts.thread_id AND p.attempt_id = attempts.id),
    sent_text = coalesce(
        (SELECT p.text FROM thread_parts p WHERE p.thread_id = attempts.thread_id AND p.attempt_id = attempts.id),
        sent_text
    )
WHERE thread_id IS NOT NULL;
""",
    9: """
-- A run that posts nothing no longer writes a row of its own (skips.py): a day's streak of skipped
-- runs becomes one row, which says how many runs it stands for.
ALTER TABLE runs ADD COLUMN runs INTEGER NOT NULL DEFAULT 1;
-- Runs older than HISTORY_DAYS, folded into a row a day (prune.py) and removed.
CREATE TABLE days (
    day TEXT PRIMARY KEY,          -- YYYY-MM-DD, UTC
    runs INTEGER NOT NULL,
    posted INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    failed INTEGER NOT NULL
);
""",
    10: """
-- A one-off line ({at: ...}) that no run could post within LATE_BY of its time: noted once, so no
-- later run posts it or notes it again, and check and the status page say so.
CREATE TABLE missed (
    text TEXT PRIMARY KEY,         -- the line as written, its options and all
    due_at TEXT NOT NULL,          -- its time
    noted_at TEXT NOT NULL,        -- when a run found it missed
    reason TEXT NOT NULL
);
""",
    11: """
-- Replies (REPLY_RULES): every mention a run read, once per network and id, with what became of it.
-- A mention is claimed (status answered, attempt_id set) in the same transaction as its reply's
-- attempt is recorded, before the reply is sent: a second run, or a run after a kill, finds it taken.
CREATE TABLE mentions (
    id INTEGER PRIMARY KEY,
    network TEXT NOT NULL,
    mention_id TEXT NOT NULL,
    author_id TEXT NOT NULL,
    author TEXT NOT NULL,          -- the author's handle, as people write it
    author_bot INTEGER NOT NULL DEFAULT 0,
    bio TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    reply_to TEXT NOT NULL,        -- what the network's poster answers it by
    visibility TEXT,
    answers_bot INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,          -- pending, answered, skipped, failed
    reason TEXT,                   -- why it was skipped or failed
    rule TEXT,                     -- the rule (its key) that answered it
    attempt_id INTEGER REFERENCES attempts (id),
    UNIQUE (network, mention_id)
);
CREATE INDEX mentions_status ON mentions (status, created_at);
CREATE INDEX mentions_author ON mentions (network, author_id);
-- Where each network's next read of mentions starts (opaque: only the network reads it).
CREATE TABLE mention_cursors (
    network TEXT PRIMARY KEY,
    cursor TEXT,
    read_at TEXT NOT NULL
);
-- Each read of a network's mentions that costs something (X bills reads): for its monthly budget.
CREATE TABLE mention_reads (
    id INTEGER PRIMARY KEY,
    network TEXT NOT NULL,
    read_at TEXT NOT NULL,
    requests INTEGER NOT NULL,
    cost REAL NOT NULL
);
CREATE INDEX mention_reads_at ON mention_reads (network, read_at);
-- Accounts that asked the bot to stop answering them ("stop"): never answered again.
CREATE TABLE stopped_accounts (
    network TEXT NOT NULL,
    author_id TEXT NOT NULL,
    author TEXT NOT NULL,
    stopped_at TEXT NOT NULL,
    mention_id TEXT,
    PRIMARY KEY (network, author_id)
);
""",
    12: """
-- The post itself, stored whole with its attempt (the delivery's own JSON: its text, pictures with
-- their alt text, the post it answers, visibility, sensitive, labels, language, warning, its
-- source's key): settling, a look-up's re-send, catching up and `history` read it, never the text
-- again. A thread keeps its post too, so its later parts go out as its first did. NULL: a row
-- written before schema 12 (read as before).
ALTER TABLE attempts ADD COLUMN post TEXT;
ALTER TABLE threads ADD COLUMN post TEXT;
""",
}
SCHEMA_VERSION = max(_MIGRATIONS)
# The tables a file of each schema version must have; a file that lacks one is not a whole history.
TABLES = {
    1: {"runs", "attempts", "bag"},
    2: {"runs", "attempts", "bag", "jobs"},
    3: {"runs", "attempts", "bag", "jobs", "job_threads"},
    4: {"runs", "attempts", "bag", "jobs", "job_threads"},
    5: {"runs", "attempts", "bag", "jobs", "job_threads"},
    6: {"runs", "attempts", "bag", "jobs", "job_threads", "alerts"},
    7: {"runs", "attempts", "bag", "jobs", "job_threads", "alerts", "threads", "thread_parts"},
    8: {"runs", "attempts", "bag", "jobs", "job_threads", "alerts", "threads", "thread_parts"},
    9: {"runs", "attempts", "bag", "jobs", "job_threads", "alerts", "threads", "thread_parts", "days"},
    10: {"runs", "attempts", "bag", "jobs", "job_threads", "alerts", "threads", "thread_parts", "days", "missed"},
    11: {
        "runs",
        "attempts",
        "bag",
        "jobs",
        "job_threads",
        "alerts",
        "threads",
        "thread_parts",
        "days",
        "missed",
        "mentions",
        "mention_cursors",
        "mention_reads",
        "stopped_accounts",
    },
}
TABLES[12] = TABLES[11]
# How a file older than a schema version names today's columns, as SQL over its attempts: the status
# page reads a history as it finds it (only a run migrates one).
_EARLIER_COLUMNS = {
    4: {
        "post_id": "tweet_id",
        "error_kind": f"CASE WHEN outcome = 'failed' AND {_KEYS_REFUSED_BEFORE_4} THEN 'unauthorized' END",
    },
    5: {"settled": "NULL"},
    6: {"cost": "NULL"},
    8: {"part": "NULL"},
    9: {"runs": "1"},
    12: {"post": "NULL"},
}


def column(name: str, version: int) -> str:
    """Today's column `name` in a file of schema `version`, as an SQL expression to select."""
    for since in sorted(_EARLIER_COLUMNS, reverse=True):
        if version < since and name in _EARLIER_COLUMNS[since]:
            return _EARLIER_COLUMNS[since][name]
    return name


# How the file is laid out, for an SD card: small pages (a post rewrites a dozen pages twice, in the
# journal and in place: 1 KiB pages make that about 56 KiB where SQLite's 4 KiB made 110). No
# auto-vacuum (it rewrites a page of pointers with every transaction): the pages pruning frees
# (`HistoryStore.prune`) are reused by the rows of the days after, so the file stops growing.
PAGE_SIZE = 1024
_LAYOUT = f"PRAGMA page_size = {PAGE_SIZE}; PRAGMA auto_vacuum = NONE;"


def create_script() -> str:
    """The whole schema, at the newest version, in one transaction, in the layout above."""
    steps = " ".join(_MIGRATIONS[version] for version in sorted(_MIGRATIONS))
    return (
        f"{_LAYOUT} BEGIN; {_SCHEMA} {steps} PRAGMA application_id = {APPLICATION_ID};"
        f" PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    )


def verify_pages(conn: sqlite3.Connection) -> None:
    """Raise `sqlite3.DatabaseError` if SQLite finds the file damaged (it reads every page)."""
    problems = conn.execute("PRAGMA quick_check").fetchall()
    if problems != [("ok",)]:
        raise sqlite3.DatabaseError(problems[0][0])


def relayout(conn: sqlite3.Connection) -> bool:
    """Give a file made before the layout above that layout, by rewriting it (VACUUM, once; it
    needs room for a copy of the file). Tried at a run's start, before anything is sent, and given
    up at once when another program holds the file: the next run tries again. Returns whether the
    file has the layout now."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    auto_vacuum = conn.execute("PRAGMA auto_vacuum").fetchone()[0]
    if page_size == PAGE_SIZE and auto_vacuum == 0:
        return True
    (timeout,) = conn.execute("PRAGMA busy_timeout").fetchone()
    try:
        conn.executescript(f"PRAGMA busy_timeout = 200; {_LAYOUT} VACUUM;")
    except sqlite3.OperationalError:  # busy, or no room for the copy: it stays as it is
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
    return True


def check_and_migrate(conn: sqlite3.Connection, label: str, *, verify: bool = True) -> None:
    """Refuse a file that is not a whole history of ours (naming what to do about it), then apply
    the migrations it lacks. Damage SQLite finds surfaces as `sqlite3.DatabaseError` for the caller
    to explain."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app_id != APPLICATION_ID:
        what = "an empty database" if not tables else "it holds other data"
        raise HistoryError(
            f"{label} is not a twitterbot history database ({what}): "
            "set BOT_STATE_DIR to another folder, or move the file aside"
        )
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"{label} was written by a newer twitterbot (schema {version}, this one knows "
            f"{SCHEMA_VERSION}): update twitterbot (git pull) before running it again"
        )
    missing = TABLES.get(version, TABLES[1]) - tables
    if version < 1 or missing:
        held = "no tables at all" if not tables else f"no {', '.join(sorted(missing)) or 'schema version'}"
        raise HistoryError(
            f"{label} is marked as a twitterbot history but has {held}, so it is not a whole"
            " history: restore it from a backup, or delete it to start a new history (the bot will"
            " then not know what it already posted)"
        )
    if verify:  # reads every page: see `Database._verify_today`
        verify_pages(conn)
    for target in range(version + 1, SCHEMA_VERSION + 1):
        # executescript commits first; BEGIN..COMMIT makes each step all-or-nothing.
        conn.executescript(f"BEGIN; {_MIGRATIONS[target]} PRAGMA user_version = {target}; COMMIT;")
