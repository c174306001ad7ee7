"""Writes the big rule files of tests/fixtures/replies/, in the style of real ones (run it again after
changing it: `python tests/replies/make_rule_files.py`):

- bbdq-348.json: a Blue Bots Done Quick bot's 348 rules, matched case-insensitively: word keys
  between lookbehinds and lookaheads (``(?<=\\s|^)frog(?=\\s|$|[!?.,])``), alternatives, emoji keys,
  `\\[`-escaped brackets and line breaks in responses, "0" and "" for no reply, a catch-all last;
- cbts-650.json: a Cheap Bots Toot Sweet bot's 650 rules with visibility words ({unlisted},
  {private}, {direct}), JavaScript's `\\/` and `[^]`, case-sensitive keys, grammar symbols.

Each file's rule i answers "word i" (its key's word), so a test can ask any of them.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "replies"
EMOJI = ["🐸", "🐢", "🦊", "🌧️", "☕", "🎉", "🐙", "🌈", "🍕", "🚀", "👋🏽", "❤️"]


def bbdq() -> dict:
    rules = {}
    for number in range(336):
        word = f"word{number}"
        if number % 7 == 0:
            key = f"(?<=\\s|^)({word}|{word}s|{word}y)(?=\\s|$|[!?.,])"
        elif number % 7 == 1:
            key = f"(?<![a-z0-9]){word}(?![a-z0-9])"
        elif number % 7 == 2:
            key = f"\\b{word}\\b"
        elif number % 7 == 3:
            key = f"(?<=@\\w+ |^){word}(?=\\s|$)"
        else:
            key = f"(?<=\\s|^){word}(?=\\s|$|[!?.,])"
        response = [f"#answer{number % 5}#", "0", "", f"\\[{word}\\] says hi\\nsecond line", f"yes, {word}!"][
            number % 5
        ]
        if number % 5 in (1, 2) and number % 10 == 1:
            response = f"a {word} reply"  # most rules answer
        rules[key] = response
    for emoji in EMOJI:
        rules[emoji] = f"{emoji} to you too"
    assert len(rules) == 348
    return rules


def cbts() -> dict:
    rules = {}
    words = ["public", "unlisted", "private", "direct", ""]
    for number in range(648):
        word = f"Word{number}"
        if number % 4 == 0:
            key = f"(?<=\\s|^){word}\\b"
        elif number % 4 == 1:
            key = f"{word}\\/(yes|no)"
        elif number % 4 == 2:
            key = f"{word}[^]"
        else:
            key = f"^@\\w+\\s+{word}"
        visibility = words[number % 5]
        rules[key] = f"#reply# {word}" + (f" {{{visibility}}}" if visibility else "")
    rules["[Hh]elp"] = "Ask me about Word0 to Word647 {unlisted}"
    rules["."] = "{private}I did not understand that."
    assert len(rules) == 650
    return rules


def main() -> None:
    for name, rules in (("bbdq-348.json", bbdq()), ("cbts-650.json", cbts())):
        (HERE / name).write_text(json.dumps(rules, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
