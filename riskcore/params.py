"""Parameters as values: one parser for agent specs, recogniser settings and their weights.

A spec names a thing and sets some of its parameters, as text or as a mapping (a sweep spec, JSON):

    mission:focus=0.8:threshold=0.7            NAME, then KEY=VALUE items separated by ':'
    phatt:scheme=simple:c=1:i=0.98:attack_won.i=0.9
    classifier:C=1:train=rec-train-f0,rec-train-f1   a ',' inside a value makes a list
    {name: mission, focus: 0.8}                the same as a mapping; values keep their YAML/JSON types

Text values are typed once, here: whole numbers become `int`, other numbers `float`, `true`/`false` become
`bool`, anything else stays text. `Spec.text` writes a spec back (numbers in their shortest form); a recogniser
builds its parameters in a fixed order with its defaults filled in, so its text is canonical: two ways of writing
the same setting give the same label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

Value = int | float | bool | str | tuple
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)?$")


class SpecError(ValueError):
    """A spec is malformed; the message names the spec and the offending item."""


def parse_value(text: str) -> Value:
    """`'3'` -> 3, `'0.8'` -> 0.8, `'true'` -> True, `'a,b'` -> ('a', 'b'), anything else unchanged."""
    if "," in text:
        return tuple(parse_value(x) for x in text.split(","))
    if text in ("true", "false"):
        return text == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def format_value(value: Any) -> str:
    """The canonical text of a value: floats in their shortest form (`0.8`, `1`), lists joined by ','."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}" if float(f"{value:g}") == value else repr(value)
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Spec:
    """A name and its parameters (keys in the order given)."""

    name: str
    params: tuple[tuple[str, Value], ...] = ()

    @property
    def kwargs(self) -> dict[str, Value]:
        return dict(self.params)

    @property
    def text(self) -> str:
        """The spec as text: the name, then the parameters in their order."""
        return "".join([self.name] + [f":{k}={format_value(v)}" for k, v in self.params])

    def __str__(self) -> str:
        return self.text

    def with_defaults(self, defaults: Mapping[str, Value]) -> "Spec":
        """The spec with every default it does not set itself."""
        given = self.kwargs
        return Spec(self.name, tuple({**defaults, **given}.items()))


def parse(spec: "str | Mapping[str, Any] | Spec") -> Spec:
    """A spec from its text or its mapping form; raises `SpecError` naming the bad item."""
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, Mapping):
        if "name" not in spec:
            raise SpecError(f"spec {dict(spec)!r} needs a 'name'")
        params = tuple((str(k), _plain(v)) for k, v in spec.items() if k != "name")
        return _checked(str(spec["name"]), params, repr(dict(spec)))
    if not isinstance(spec, str):
        raise SpecError(f"a spec is text or a mapping, got {spec!r}")
    name, *items = spec.strip().split(":")
    params = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise SpecError(f"spec {spec!r}: parameter {item!r} must look like name=value")
        params.append((key.strip(), parse_value(value.strip())))
    return _checked(name.strip(), tuple(params), repr(spec))


def _plain(value: Any) -> Value:
    return tuple(value) if isinstance(value, list) else value


def _checked(name: str, params: tuple[tuple[str, Value], ...], where: str) -> Spec:
    if not _NAME.match(name):
        raise SpecError(f"spec {where}: bad name {name!r}")
    keys = [k for k, _ in params]
    for k in keys:
        if not _KEY.match(k):
            raise SpecError(f"spec {where}: bad parameter name {k!r}")
    if len(set(keys)) != len(keys):
        raise SpecError(f"spec {where}: a parameter is given twice ({keys})")
    return Spec(name, params)


def check_types(spec: Spec, types: Mapping[str, type | tuple[type, ...]], what: str) -> None:
    """Raise `SpecError` when a parameter is unknown or of the wrong type (`bool` is no number)."""
    for key, value in spec.params:
        if key not in types:
            raise SpecError(f"{what} {spec.text!r}: unknown parameter {key!r}; known: {sorted(types)}")
        want = types[key] if isinstance(types[key], tuple) else (types[key],)
        accepted = want + ((int,) if float in want else ())  # a whole number is a float too
        if not isinstance(value, accepted) or (isinstance(value, bool) and bool not in want):
            names = "/".join(t.__name__ for t in want)
            raise SpecError(f"{what} {spec.text!r}: parameter {key}={format_value(value)!r} must be {names}")
