"""Delexicalised slot placeholders: which tokens are filled, and what filling does to the real
parsers' reading of a BAGEL-style output."""

from __future__ import annotations

from features.placeholders import STAND_IN, fill_placeholders, parse_placeholders


def test_only_whole_token_placeholders_are_filled():
    texts = [
        "X is a restaurant near X .",
        "X's food is cheap (near X).",
        "An X-ray of XBox, taX and x.",
    ]
    filled = fill_placeholders(texts, ("X",))
    assert filled[0] == f"{STAND_IN} is a restaurant near {STAND_IN} ."
    assert filled[1] == f"{STAND_IN}'s food is cheap (near {STAND_IN})."
    assert filled[2] == texts[2]  # inside a word, hyphenated, or another case: left alone


def test_several_placeholders_and_none():
    assert fill_placeholders(["<name> is near X-1 and X"], ("X", "<name>", "X-1")) == [
        f"{STAND_IN} is near {STAND_IN} and {STAND_IN}"
    ]
    assert fill_placeholders(["X is near X ."], ()) == ["X is near X ."]


def test_the_setting_parses_from_a_comma_separated_string():
    assert parse_placeholders("X, <name>,,X") == ("X", "<name>")
    assert parse_placeholders("") == ()
    assert parse_placeholders(None) == ()
    assert parse_placeholders(["X", " "]) == ("X",)
