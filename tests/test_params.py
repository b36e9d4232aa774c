"""One parser for specs: agents, recognisers and weights, as text or as a mapping."""

import pytest

from riskcore.params import Spec, SpecError, check_types, format_value, parse, parse_value


def test_values_are_typed_once_when_parsed():
    assert parse_value("3") == 3 and isinstance(parse_value("3"), int)
    assert parse_value("0.8") == 0.8 and parse_value("-1") == -1
    assert parse_value("true") is True and parse_value("false") is False
    assert parse_value("a,b") == ("a", "b") and parse_value("1,2.5") == (1, 2.5)
    assert parse_value("rec-test-f0.8") == "rec-test-f0.8"


def test_text_and_mapping_forms_give_the_same_spec():
    text = parse("mission:focus=0.8:threshold=0.7")
    assert text == parse({"name": "mission", "focus": 0.8, "threshold": 0.7})
    assert text.kwargs == {"focus": 0.8, "threshold": 0.7} and text.text == "mission:focus=0.8:threshold=0.7"
    assert parse({"name": "classifier", "train": ["a", "b"]}).text == "classifier:train=a,b"


@pytest.mark.parametrize("spec,message", [("mission:focus", "name=value"), ("mission:focus=", "name=value"),
                                          ("mis sion", "bad name"), ("mission:fo cus=1", "bad parameter name"),
                                          ("mission:focus=1:focus=2", "given twice"), ({"focus": 1}, "needs a 'name'"),
                                          (3, "text or a mapping")])
def test_malformed_specs_are_named(spec, message):
    with pytest.raises(SpecError, match=message):
        parse(spec)


def test_types_are_checked_and_a_flag_is_no_number():
    types = {"focus": float, "depth": int, "mode": str}
    check_types(parse("x:focus=1:depth=2:mode=lazy"), types, "agent")  # a whole number is a float too
    for bad, message in (("x:focus=true", "focus=true"), ("x:depth=2.5", "depth=2.5"), ("x:mode=3", "mode=3"),
                         ("x:speed=1", "unknown parameter 'speed'")):
        with pytest.raises(SpecError, match=message):
            check_types(parse(bad), types, "agent")


def test_defaults_fill_in_without_overriding_and_numbers_print_short():
    spec = Spec("inverse", (("beta", 20),)).with_defaults({"beta": 10.0, "eps": 0.05})
    assert spec.kwargs == {"beta": 20, "eps": 0.05}
    assert format_value(1.0) == "1" and format_value(0.1 + 0.2) == repr(0.1 + 0.2) and format_value(False) == "false"
