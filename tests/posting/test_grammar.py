"""Tracery grammars (twitterbot/posting/grammar.py): the shapes Cheap Bots Done Quick bots use,
the reference implementation's outputs for fixed seeds, the modifiers and actions, the recursion
bound, and the problems `check` names."""

from __future__ import annotations

import contextlib
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twitterbot.errors import TweetFileError
from twitterbot.posting.grammar import (
    MAX_CHARACTERS,
    MAX_DEPTH,
    MAX_HELD,
    MAX_STEPS,
    MODIFIERS,
    Drawn,
    Grammar,
    OutOfWork,
    TooDeep,
    Work,
    parse_grammar,
    read_grammar,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "grammars"
SHAPES = ("plain.json", "modifiers.json", "actions.json", "deep.json")
# What is left of Tracery's syntax if a rule was not expanded: a #tag#, an [action], ((missing)).
LEFTOVER = re.compile(r"#\w[\w.]*#|\[[\w#]+:|\(\(|\)\)")


def _grammar(**rules: object) -> Grammar:
    return parse_grammar(json.dumps(rules).encode(), Path("bot.json"))


@pytest.mark.parametrize("name", SHAPES)
def test_public_bot_shapes_expand_with_no_rule_syntax_left(name: str) -> None:
    grammar = read_grammar(FIXTURES / name)
    assert grammar.problems() == []
    rng = random.Random(1)
    texts = {grammar.expand(rng) for _ in range(300)}
    assert len(texts) > 10
    for text in texts:
        assert text and not LEFTOVER.search(text), text
        assert "\\" not in text


@pytest.mark.parametrize("name", SHAPES)
def test_the_reference_implementation_gives_the_same_posts_for_the_same_seed(name: str) -> None:
    # reference.json holds tracery3's outputs (make_reference.py beside it), seeds 0-49.
    expected = json.loads((FIXTURES / "reference.json").read_text(encoding="utf-8"))[name]
    grammar = read_grammar(FIXTURES / name)
    assert [grammar.expand(random.Random(seed)) for seed in range(len(expected))] == expected


@pytest.mark.parametrize(
    "modifier, text, expected",
    [
        ("capitalize", "owl", "Owl"),
        ("capitalize", "", ""),
        ("capitalizeAll", "under the hill-top", "Under The Hill-Top"),
        ("capitalizeAll", "an iPhone", "An IPhone"),
        ("a", "owl", "an owl"),
        ("a", "unicorn", "a unicorn"),
        ("a", "umbrella", "an umbrella"),
        ("a", "fox", "a fox"),
        ("a", "", "a "),
        ("s", "fox", "foxes"),
        ("s", "berry", "berries"),
        ("s", "key", "keys"),
        ("s", "church", "churches"),
        ("s", "owl", "owls"),
        ("s", "", ""),
        ("firstS", "cup of tea", "cups of tea"),
        ("ed", "hope", "hoped"),
        ("ed", "hurry", "hurried"),
        ("ed", "play", "played"),
        ("ed", "jump", "jumped"),
        ("ed", "", ""),
        ("uppercase", "shout", "SHOUT"),
        ("lowercase", "QUIET", "quiet"),
    ],
)
def test_modifiers(modifier: str, text: str, expected: str) -> None:
    assert MODIFIERS[modifier](text) == expected
    grammar = _grammar(origin=[f"#word.{modifier}#"], word=[text])
    assert grammar.expand(random.Random(0)) == expected


def test_modifiers_chain_and_take_parameters() -> None:
    assert _grammar(origin=["#animal.s.capitalize#"], animal=["fox"]).expand(random.Random(0)) == "Foxes"
    assert _grammar(origin=["#w.replace(a,o)#"], w=["banana"]).expand(random.Random(0)) == "bonono"


def test_an_action_sets_a_rule_for_the_rest_of_the_post() -> None:
    grammar = _grammar(origin=["[hero:#name#]#hero# and #hero#"], name=["Ada", "Bo", "Cy", "Di"])
    for seed in range(20):
        first, second = grammar.expand(random.Random(seed)).split(" and ")
        assert first == second


def test_a_tags_own_action_holds_only_while_it_expands() -> None:
    # As in Kate Compton's Tracery: the tag's push is popped after it, so #hero# is the base rule again.
    grammar = _grammar(origin=["#[hero:Ada]story# / #hero#"], story=["#hero# rides"], hero=["nobody"])
    assert grammar.expand(random.Random(0)) == "Ada rides / nobody"


def test_a_set_rule_action_runs_the_actions_inside_it() -> None:
    grammar = _grammar(
        origin=["[#setPronouns#]#they.capitalize# said #their# name"],
        setPronouns=["[they:she][their:her]", "[they:he][their:his]"],
    )
    assert {grammar.expand(random.Random(seed)) for seed in range(30)} == {"She said her name", "He said his name"}


def test_pushed_texts_are_expanded_once_and_split_at_commas() -> None:
    grammar = _grammar(origin=["[pet:cat,dog]#pet#"])
    assert {grammar.expand(random.Random(seed)) for seed in range(30)} == {"cat", "dog"}


def test_an_escaped_hash_is_a_literal_hash() -> None:
    assert _grammar(origin=["#w# \\#tinybirds"], w=["tweet"]).expand(random.Random(0)) == "tweet #tinybirds"


def test_recursion_without_end_is_bounded() -> None:
    grammar = _grammar(origin=["#loop#"], loop=["more #loop#"])
    with pytest.raises(TooDeep):
        grammar.expand(random.Random(0))
    branching = _grammar(origin=["#b#"], b=["#b##b##b#"])
    with pytest.raises(TooDeep):
        branching.expand(random.Random(0))


def test_deep_but_ending_recursion_expands() -> None:
    grammar = _grammar(origin=["#n#"], n=["x#n#"] * 9 + ["."])
    lengths = []
    for seed in range(50):
        try:
            lengths.append(len(grammar.expand(random.Random(seed))))
        except TooDeep:
            continue
    assert lengths and max(lengths) > 10 and max(lengths) <= MAX_DEPTH + 1


def test_problems_name_each_rule_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bot.json"
    path.write_text(
        "{\n"
        '  "start": ["#greeting# #place.shout#"],\n'
        '  "greeting": [],\n'
        '  "set": ["[hero:#name#]#hero#", "#unclosed"]\n'
        "}\n",
        encoding="utf-8",
    )
    found = read_grammar(path).problems()
    problems = [(problem.lineno, problem.message) for problem in found]
    assert problems[0] == (0, 'has no "origin" rule: add one, e.g. "origin": ["#greeting#, world"]')
    assert [problem.tolerated for problem in found].count(False) == 1  # Tracery runs through the rest
    said = " | ".join(message for _, message in problems)
    missing = 'uses #place#, which is not there: Tracery writes ((place)) in the post; add a rule "place"'
    assert (2, f'rule "start" {missing}') in problems
    assert (
        3,
        'rule "greeting" is empty: Tracery writes nothing for it; give it a text ("" if nothing is meant)',
    ) in problems
    assert (
        4,
        'rule "set" uses #name#, which is not there: Tracery writes ((name)) in the post; add a rule "name"',
    ) in problems
    assert "modifier .shout, which Tracery does not have: Tracery writes ((.shout)) after the text" in said
    assert 'a # without its closing # in "#unclosed": Tracery leaves it out, the post shows "unclosed"' in said
    assert "#hero#" not in said  # set by an action: not missing


def test_what_tracery_runs_through_is_written_as_tracery_writes_it() -> None:
    """Kate Compton's Tracery writes ((name)) for a rule that is not there, nothing for an empty
    rule, ((.name)) after the text for an unknown modifier, and leaves a lone # out: a bot moved in
    posted so for months, and a draw that met one was refused (exit 65)."""
    grammar = _grammar(
        origin=["#bird.a# #mood.capitalize##blank# #tune.shout# in C# tonight"], bird=[], tune=["la"], blank=[]
    )
    drawn = grammar.draw(random.Random(0))
    assert drawn.text == "a  ((mood)) la((.shout)) in C tonight"
    assert drawn.slips == (
        'rule "origin" uses #mood#, which is not there: the post shows ((mood))',
        'rule "origin" uses the modifier .shout, which Tracery does not have: the post shows ((.shout))',
        'rule "origin" has a # without its closing #: Tracery leaves it out',
    )
    assert _grammar(origin=["We are #1"]).expand(random.Random(0)) == "We are 1"
    assert (
        _grammar(origin=["C# and F# too"]).expand(random.Random(0)) == "C(( and F)) too"
    )  # a tag, as Tracery reads it
    assert _grammar(origin=["a ## b"]).expand(random.Random(0)) == "a ((undefined)) b"
    assert _grammar(origin=["#[x:1]#"], undefined=["named"]).expand(random.Random(0)) == "named"
    assert _grammar(origin=["#deep#"], deep=["#gone.s#!"]).draw(random.Random(0)) == Drawn(
        "((gone))s!", ('rule "deep" uses #gone#, which is not there: the post shows ((gone))',)
    )
    assert all(problem.tolerated for problem in grammar.problems())
    assert not _grammar(origin=["#a[x:y]b#"]).problems()[0].tolerated  # two rule names: Tracery throws


@pytest.mark.parametrize(
    "text, said",
    [
        ('{\n  "origin": ["a",\n  "b"\n', "line 4 column 1 is not valid JSON"),
        ('{\n  "origin": ["#b#"]\n  "b": ["c"]\n}', "line 3 column 3 is not valid JSON (Expecting ',' delimiter)"),
        # A trailing comma is named at the comma on every Python (3.13's json does; older ones did not).
        ('{"origin": ["a"],}', "line 1 column 17 is not valid JSON (Illegal trailing comma before end of object)"),
        (
            '{\n  "origin": ["a",\n  ]\n}',
            "line 2 column 17 is not valid JSON (Illegal trailing comma before end of array)",
        ),
        (
            '{\n  "origin": ["a",\n}',
            "line 3 column 1 is not valid JSON (Expecting value)",
        ),  # a bracket that closes nothing
        ('["origin"]', "is not a Tracery grammar"),
        ('{\n"origin": [1, 2]}', 'line 2: rule "origin" must be a text or a list of texts'),
    ],
)
def test_a_file_that_is_no_grammar_is_a_data_error_naming_its_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "bot.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TweetFileError) as caught:
        read_grammar(path)
    assert said in str(caught.value)
    assert caught.value.exit_status == 65


def test_a_tag_naming_two_rules_met_by_an_expansion_is_a_data_error() -> None:
    with pytest.raises(TweetFileError, match="two rule names in the tag"):
        _grammar(origin=["#a[x:y]b#"]).expand(random.Random(0))


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["origin", "a", "b"]), st.lists(st.text(alphabet="ab#[]:.,\\ xPOP"), max_size=3))
)
def test_any_grammar_expands_or_says_why(rules: dict) -> None:
    grammar = _grammar(**rules)
    grammar.problems()  # never raises
    try:
        text = grammar.expand(random.Random(0))
    except (TweetFileError, TooDeep):
        return
    assert isinstance(text, str)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_read_as_a_grammar_or_a_data_error(data: bytes) -> None:
    with contextlib.suppress(TweetFileError):
        parse_grammar(data, Path("bot.json"))


def test_a_pictures_brackets_are_text_and_its_tags_expand() -> None:
    grammar = _grammar(origin=["An #a# ![a small #a#](#a#.png) [x:y]#x#"], a=["owl"])
    assert grammar.expand(random.Random(0)) == "An owl ![a small owl](owl.png) y"
    assert grammar.problems() == []


# -- bounds: what a hostile or mistaken grammar costs ------------------------------------------------

# Each of these once took minutes, all the memory there was, or Python's stack (exit 1).
BLOW_UPS = {
    # [x:#x##x#] forty times: x's text doubles each time, to 2^40 characters.
    "an action that doubles a rule": ({"origin": ["[x:ab]" + "[x:#x##x#]" * 40 + "#x#"]}, "x", "origin"),
    # Each .replace makes ten characters of one: nine make a thousand million.
    "chained .replace": ({"origin": ["#w" + ".replace(a,aaaaaaaaaa)" * 9 + "#"], "w": ["a" * 100]}, "w", "w"),
    # Two thousand copies of a text of a thousand characters: two million, within MAX_TAGS.
    "a long text used many times": ({"origin": ["#e#" * 2000], "e": ["y" * 1000]}, "e", "e"),
    "an empty .replace": ({"origin": ["#w" + ".replace(,xxxxxxxxxx)" * 10 + "#"], "w": ["abc"]}, "w", "w"),
}


@pytest.mark.parametrize("case", sorted(BLOW_UPS))
def test_an_expansion_past_its_work_bound_is_a_data_error_naming_the_rule(tmp_path: Path, case: str) -> None:
    rules, name, inside = BLOW_UPS[case]
    path = tmp_path / "bot.json"
    path.write_text(json.dumps(rules, indent=1), encoding="utf-8")
    grammar = read_grammar(path)
    assert grammar.problems() == []  # nothing to see before it is expanded
    found = []
    for seed in range(5):
        with pytest.raises((TweetFileError, TooDeep)) as caught:
            grammar.expand(random.Random(seed))
        found.append(caught.value)
    errors = [error for error in found if isinstance(error, TweetFileError)]
    assert errors, found
    said = str(errors[0])
    assert errors[0].exit_status == 65
    assert said.startswith(f"{path} line ") and f"more than {MAX_CHARACTERS:,} characters" in said
    assert "[x:#x##x#]" in said and ".replace" in said  # the usual culprits, to look for
    if name:
        assert f'rule "{name}"' in said and f"line {grammar.lines[inside]}:" in said
    if name and name != inside:
        assert f'(set by an action in rule "{inside}")' in said


def test_rules_set_by_actions_are_bounded_too() -> None:
    # 5,000 tags each setting 2,000 rules: ten million stored texts, no text long.
    grammar = _grammar(origin=["#a#" * 5000], a=["[b:c]" * 2000])
    with pytest.raises(TweetFileError, match=f'rule "a" holds more than {MAX_HELD:,} rules set by actions'):
        grammar.expand(random.Random(0))


def test_steps_are_bounded_too() -> None:
    # Sixteen thousand actions in a text, no text long and no rule held: Python's time, not memory.
    grammar = _grammar(origin=["#a#" * 9], a=["[b:c][b:POP]" * 8000])
    with pytest.raises(TweetFileError, match=f'rule "a" took more than {MAX_STEPS:,} steps'):
        grammar.expand(random.Random(0))


def test_draws_that_share_work_stop_when_it_is_spent() -> None:
    grammar = _grammar(origin=["#w# #w#"], w=["x" * 100_000])
    work = Work(900_000, 1000)  # one expansion reads and makes 800,000: w's text twice, and both in origin's tag
    assert len(grammar.expand(random.Random(0), work=work)) == 200_001
    with pytest.raises(OutOfWork):
        for _ in range(10):
            grammar.expand(random.Random(0), work=work)
    assert work.made > work.characters
    steps = Work(10**9, 1000)
    with pytest.raises(OutOfWork):
        for _ in range(1000):
            _grammar(origin=["#a##a##a#"], a=["x"]).expand(random.Random(0), work=steps)
    assert steps.taken == 1001


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "x" + "]" * 100_000,  # actions in actions
        "[#" * 30_000 + "x" + "#]" * 30_000,  # tags in actions in tags: each level was read again
        "#[x:" * 100 + "y" + "]#" * 100,
    ],
    ids=["actions", "tags and actions", "pushes"],
)
def test_brackets_nested_past_the_bound_are_a_problem_and_a_data_error(text: str) -> None:
    grammar = _grammar(origin=[text])
    problems = [problem.message for problem in grammar.problems()]
    assert len(problems) == 1
    assert problems[0].startswith(f'rule "origin" has [ nested more than {MAX_DEPTH} deep in "')
    assert "characters)" in problems[0] and len(problems[0]) < 300  # the text cut short, not repeated
    with pytest.raises(TweetFileError, match=f"nested more than {MAX_DEPTH} deep: no expansion can reach its end"):
        grammar.expand(random.Random(0))


def test_brackets_nested_within_the_bound_still_expand() -> None:
    text = "#c#"
    for _ in range(25):  # #[#[#c#]c#]c#: each tag expands the one inside it for its actions
        text = f"#[{text}]c#"
    grammar = _grammar(origin=[text], c=["b"])
    assert grammar.problems() == []
    assert grammar.expand(random.Random(0)) == "b"


@pytest.mark.parametrize(
    "data, line",
    [
        (b'{"origin": ' + b"[" * 100_000 + b'"a"' + b"]" * 100_000 + b"}", 1),
        (b'{\n"origin": ["a"],\n"b":\n' + b'{"c": ' * 100_000 + b'"d"' + b"}" * 100_000 + b"}", 4),
    ],
    ids=["lists", "objects"],
)
def test_json_nested_far_too_deep_is_a_data_error_naming_its_line(data: bytes, line: int) -> None:
    with pytest.raises(TweetFileError) as caught:
        parse_grammar(data, Path("bot.json"))
    assert str(caught.value).startswith(f"bot.json line {line} holds lists or objects inside each other far too deep")


@pytest.mark.parametrize(
    "data, rule",
    [
        (b'{"origin": ["a \\ud800 b"]}', '"origin"'),
        (b'{"origin": ["#x#"],\n"x": ["fine", "\\udfff"]}', '"x"'),
        (b'{"origin": ["#\\udc00#"],\n"\\udc00": ["x"]}', '"origin"'),
        (b'{"origin": ["x"],\n"\\udc00": ["x"]}', '"\\udc00"'),
    ],
)
def test_a_lone_surrogate_is_a_data_error_naming_its_rule(data: bytes, rule: str) -> None:
    with pytest.raises(TweetFileError) as caught:
        parse_grammar(data, Path("bot.json"))
    said = str(caught.value)
    assert f"rule {rule} holds a lone surrogate" in said and said.startswith("bot.json line ")
    said.encode("utf-8")  # the message itself can be printed and logged


def test_a_surrogate_pair_is_its_character() -> None:
    grammar = parse_grammar(b'{"origin": ["\\ud83e\\udd89 owl"]}', Path("bot.json"))
    assert grammar.expand(random.Random(0)) == "\U0001f989 owl"


def test_each_rules_line_is_found_in_one_pass() -> None:
    text = (
        '{\n"origin": ["#a#", "not \\"a\\": here", "[x]{y}"],\n'
        '"a\\"b": ["x"],\n'
        '"caf\\u00e9": {"origin": 1},\n'
        '  "d"  :  "one"\n'
        ', "a\\"b": ["again"]}'
    )
    lines = parse_grammar(text.replace('{"origin": 1}', '"z"').encode(), Path("bot.json")).lines
    assert lines == {"origin": 2, 'a"b': 3, "café": 4, "d": 5}
    with pytest.raises(TweetFileError, match='line 4: rule "café" must be a text or a list of texts'):
        parse_grammar(text.encode(), Path("bot.json"))


def test_a_pop_with_nothing_set_takes_the_grammars_rule_away() -> None:
    assert _grammar(origin=["[a:y][a:POP]#a#"], a=["x"]).expand(random.Random(0)) == "x"
    assert _grammar(origin=["[a:POP]#a#"], a=["x"]).expand(random.Random(0)) == "((a))"  # as Tracery
    assert _grammar(origin=["[a:POP][a:z]#a#"], a=["x"]).expand(random.Random(0)) == "z"
