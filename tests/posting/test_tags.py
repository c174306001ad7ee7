"""The services' tags read out of an expansion (posting/tags.py): found as CBDQ finds them, each
tag's meaning as CBDQ, CBTS and BBDQ gave it, and what this project reconciles between them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twitterbot.posting.tags import SvgPicture, TagError, UrlPicture, find_tags, is_options, read_tags

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'


@pytest.mark.parametrize(
    ("text", "rest", "tags"),
    [
        ("plain words", "plain words", []),
        ("a {hide} b", "a b", ["hide"]),
        ("{hide}{public}words", "words", ["hide", "public"]),
        ("before {img https://a.test/x.png} after", "before after", ["img https://a.test/x.png"]),
        # \{ and \} are braces: in the text, and inside a tag (an SVG's CSS)
        ("a \\{literal\\} b", "a {literal} b", []),
        ("{svg <style>a \\{fill:red\\}</style>}", "", ["svg <style>a {fill:red}</style>"]),
        # a tag does not span a line break; {} holds nothing and is no tag
        ("a {hide\n} b", "a {hide\n} b", []),
        ("empty {} braces", "empty {} braces", []),
    ],
)
def test_tags_are_found_as_cbdq_finds_them(text: str, rest: str, tags: list) -> None:
    assert find_tags(text) == (rest, tags)


def test_an_svg_keeps_what_is_between_svg_and_its_end_and_its_alt_text_follows() -> None:
    tagged = read_tags(f'Noughts {{svg <?xml version="1.0" encoding="UTF-8"?>{SVG} A black bar}}')
    assert tagged.text == "Noughts"
    assert tagged.pictures == (SvgPicture(SVG, "A black bar"),)


def test_img_takes_a_url_and_bbdq_s_alt_text_after_it() -> None:
    tagged = read_tags("{img https://example.org/cat.png A cat asleep on a keyboard} Caturday")
    assert tagged.pictures == (UrlPicture("https://example.org/cat.png", "A cat asleep on a keyboard"),)
    assert tagged.text == "Caturday"


@pytest.mark.parametrize(
    ("text", "alts"),
    [
        # CBTS: alt tags pair with pictures by position, the last one repeats
        ("{img https://a.test/1.png}{img https://a.test/2.png}{alt one}{alt two} x", ["one", "two"]),
        ("{img https://a.test/1.png}{img https://a.test/2.png}{alt both} x", ["both", "both"]),
        # BBDQ: an alt tag replaces the alt text of a picture that has its own
        ("{img https://a.test/1.png own}{alt new} x", ["new"]),
        # ... and goes to the picture without any before one that has its own
        ("{img https://a.test/1.png own}{img https://a.test/2.png}{alt second} x", ["own", "second"]),
        # CBDQ: no alt text at all
        ("{img https://a.test/1.png} x", [""]),
    ],
)
def test_alt_tags_reconcile_cbts_and_bbdq(text: str, alts: list) -> None:
    assert [picture.alt for picture in read_tags(text).pictures] == alts


def test_cbts_words_warning_sensitive_and_the_most_private_visibility() -> None:
    tagged = read_tags(
        "{cut spoilers}{cut second}{show}{hide}{unlisted}{private}{public} The end {img https://a.test/1.png}"
    )
    assert (tagged.warning, tagged.sensitive, tagged.visibility) == ("spoilers", True, "private")
    assert read_tags("{show} x").sensitive is False


def test_bbdq_lang_and_labels_only_with_pictures() -> None:
    with_picture = read_tags("{lang pt-br}{label nudity}{label nudity}{img https://a.test/1.png} Olá")
    assert (with_picture.language, with_picture.labels) == ("pt-BR", ("nudity",))
    assert read_tags("{label porn} words only").labels == ()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a {imgg https://a.test/x.png} b", "{imgg https://a.test/x.png}, which is no tag"),
        ("a {vid https://a.test/x.mp4} b", "not videos"),
        ("{img not-a-url} b", "does not start with a web address"),
        ("{svg <rect/>} b", "without a whole <svg"),
        ("{label spicy}{img https://a.test/1.png} b", "sexual, nudity, porn, graphic-media"),
        ("{lang english!} b", "not a BCP 47 language tag"),
        ("{cut} b", "{cut} with nothing after it"),
        ("a {hour} b", "which is no tag"),
        ("{cut x} text {lang: de}", "{lang: de}, a line option, which is read only at the very start of a post"),
        ("a {svg <?xml?>\n<svg></svg>} b", "without its } on the same line"),
        ("cut short {hide", "without its } on the same line"),
        # Tracery dropped the first of two escapes in a stretch: the style's own braces end the tag
        (
            "{svg <svg><style>text { fill: red; } .b \\{ x: 1 \\}</style></svg>}",
            "with a brace inside it not written \\{ (at 'tyle>text { fill: red; } .b...')",
        ),
    ],
)
def test_an_unknown_or_unreadable_tag_is_named_with_its_fix(text: str, said: str) -> None:
    with pytest.raises(TagError, match=None) as refused:
        read_tags(text)
    assert said in str(refused.value)


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("{cw: spoilers} text", True),
        ("{ lang : en} text", True),
        ("{lang en} text", False),
        ("{hide} text", False),
        ("{alt Note: a colon later} text", False),
        ("{img https://a.test/x.png} text", False),
    ],
)
def test_options_are_told_from_tags_by_the_colon_after_their_word(text: str, options: bool) -> None:
    assert is_options(text) is options


@given(st.text(alphabet="ab {}\\\n", max_size=40))
def test_any_text_is_read_or_refused_with_a_tag_error(text: str) -> None:
    try:
        tagged = read_tags(text)
    except TagError:
        return
    assert tagged.text == tagged.text.strip()
