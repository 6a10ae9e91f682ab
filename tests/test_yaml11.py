"""vLLM's --config is read as PyYAML reads it (yaml.safe_load in load_config_file,
vllm/utils/argparse_utils.py 0.30.0): YAML 1.1 plain scalars.  PyYAML is not installed here, so
the expected values are written by hand from its resolver's regexes and constructors
(yaml/resolver.py, yaml/constructor.py, PyYAML 6.0.4)."""

from __future__ import annotations

import math

import pytest

from mgpu_lint import safeio

TABLE = [
    # booleans: yes/no/true/false/on/off in three cases each, never y/n or mixed case
    ("yes", True), ("Yes", True), ("YES", True), ("no", False), ("No", False), ("NO", False),
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("FALSE", False),
    ("on", True), ("On", True), ("ON", True), ("off", False), ("Off", False), ("OFF", False),
    ("y", "y"), ("Y", "Y"), ("n", "n"), ("N", "N"), ("yEs", "yEs"), ("oN", "oN"),
    # integers: 0b, 0x, old octal 010, underscores, sexagesimal; no 0o
    ("0", 0), ("-0", 0), ("+12", 12), ("1_000", 1000), ("0b101", 5), ("-0b1_0", -2),
    ("0x10", 16), ("0xfF", 255), ("010", 8), ("-017", -15), ("0o17", "0o17"), ("09", "09"),
    ("0_8", "0_8"), ("1:30", 90), ("-1:00:01", -3601), ("1:60", "1:60"), ("0:30", "0:30"),
    # floats need a dot; an exponent needs a sign
    ("1e3", "1e3"), ("1E3", "1E3"), ("1.0e3", "1.0e3"), ("1.0e+3", 1000.0), ("1.e-1", 0.1),
    ("1.", 1.0), (".5", 0.5), ("-.5", "-.5"), ("+1.5", 1.5), ("1_000.5", 1000.5),
    ("1:30.5", 90.5), (".inf", math.inf), ("-.Inf", -math.inf), ("+.INF", math.inf),
    # null
    ("~", None), ("null", None), ("Null", None), ("NULL", None), ("", None), ("nULL", "nULL"),
    # strings
    ("auto", "auto"), ("1k", "1k"), ("0x", "0x"), ("1.2.3", "1.2.3"),
]


@pytest.mark.parametrize(("text", "value"), TABLE)
def test_plain_scalar_reads_as_pyyaml(text: str, value: object) -> None:
    got = safeio.loads_yaml(f"k: {text}\n", pyyaml=True)["k"]
    assert got == value and type(got) is type(value)


def test_nan_and_keys_and_lists() -> None:
    assert math.isnan(safeio.loads_yaml("k: .NaN\n", pyyaml=True)["k"])
    assert safeio.loads_yaml("yes: 1\n1_0: on\n", pyyaml=True) == {True: 1, 10: True}
    assert safeio.loads_yaml("k: [on, 1e3, 0x1]\n", pyyaml=True) == {"k": [True, "1e3", 1]}
    assert safeio.loads_yaml("k: {a: off}\n", pyyaml=True) == {"k": {"a": False}}


def test_quoted_stay_strings_and_tags_follow_pyyaml() -> None:
    assert safeio.loads_yaml("a: 'yes'\nb: \"0x10\"\nc: '~'\n", pyyaml=True) == \
        {"a": "yes", "b": "0x10", "c": "~"}
    # PyYAML builds an explicit !!int / !!float with the same constructor as a plain one
    assert safeio.loads_yaml("a: !!int '0x10'\nb: !!float '1e3'\nc: !!str yes\n",
                             pyyaml=True) == {"a": 16, "b": 1000.0, "c": "yes"}


@pytest.mark.parametrize("text", ["0b_", "0x_", "!!int ''", "!!bool maybe", "="])
def test_what_pyyaml_fails_on_is_refused(text: str) -> None:
    with pytest.raises(safeio.SideFileError):
        safeio.loads_yaml(f"k: {text}\n", pyyaml=True)


def test_without_pyyaml_yaml_1_2_as_before() -> None:
    assert safeio.loads_yaml("a: yes\nb: 1e3\nc: 0o17\n") == {"a": "yes", "b": 1000.0, "c": 15}


def test_table_matches_the_regexes() -> None:
    # each entry's tag, from pyyaml_tag, agrees with the value's type
    kinds = {bool: "bool", int: "int", float: "float", type(None): "null", str: "str"}
    for text, value in TABLE:
        assert safeio.pyyaml_tag(text) == kinds[type(value)], text
