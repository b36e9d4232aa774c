"""Agents registered by name, built from specs such as `random`, `mission:focus=0.8` or
`mission:focus=1:threshold=0.7` (`riskcore.params`: parameters after colons, or a mapping)."""

from __future__ import annotations

import inspect
from functools import lru_cache
from importlib import import_module
from typing import Iterator, Mapping

import numpy as np

from riskcore.agents.base import Agent, PlayerView
from riskcore.params import Spec, SpecError, check_types, parse

# name -> "module:class". An agent's module is imported when a spec first names it: the search agents pull in
# numba and the recognition-aware one pandas and scipy, a second of start-up a `mission` run does not need.
_BUILT_IN = {
    "random": "random_agent:RandomAgent", "mission": "heuristic:MissionAgent",
    "domination": "heuristic:DominationAgent", "bsr": "bsr:BsrAgent", "minimax": "minimax_agent:MinimaxAgent",
    "mc-rl": "mcrl:McRlAgent", "mcs": "mcs:McsAgent", "expert": "expert:ExpertAgent", "aware": "aware:AwareAgent",
    "gb": "gb_agent:GBAgent",
}


class _Registry(Mapping):
    """Agent classes by name, imported on first use."""

    def __init__(self, where: dict[str, str]):
        self._where, self._classes = dict(where), {}

    def __getitem__(self, name: str) -> type[Agent]:
        if name not in self._classes:
            module, cls = self._where[name].split(":")
            self._classes[name] = getattr(import_module(f"riskcore.agents.{module}"), cls)
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def add(self, cls: type[Agent]) -> None:
        self._where[cls.name], self._classes[cls.name] = f"{cls.__module__}:{cls.__name__}", cls


REGISTRY = _Registry(_BUILT_IN)


def register(cls: type[Agent]) -> type[Agent]:
    REGISTRY.add(cls)
    return cls


class AgentSpecError(ValueError):
    """An agent spec names an unknown agent or parameter."""


def parse_spec(spec: "str | Mapping | Spec") -> Spec:
    """`'mission:focus=0.8'` (or `{name: mission, focus: 0.8}`) -> `Spec('mission', (('focus', 0.8),))`."""
    try:
        parsed = parse(spec)
    except SpecError as exc:
        raise AgentSpecError(str(exc)) from None
    if parsed.name not in REGISTRY:
        raise AgentSpecError(f"unknown agent {parsed.name!r} in spec {spec!r}; known agents: {sorted(REGISTRY)}")
    return parsed


_SIMPLE_TYPES = {"float": float, "int": int, "str": str, "bool": bool}


@lru_cache(maxsize=None)
def parameter_types(name: str) -> dict[str, type]:
    """The parameters a spec may set: those of the agent's constructor (after player and rng) declared as a
    number, text or flag, with their types (objects such as a recogniser are given in code, not in a spec)."""
    params = list(inspect.signature(REGISTRY[name].__init__).parameters.values())[3:]
    return {p.name: _SIMPLE_TYPES[str(p.annotation)] for p in params if str(p.annotation) in _SIMPLE_TYPES}


def make_agent(spec: "str | Mapping | Spec", player: int, rng: np.random.Generator) -> Agent:
    parsed = parse_spec(spec)
    try:
        check_types(parsed, parameter_types(parsed.name), "agent spec")
    except SpecError as exc:
        raise AgentSpecError(str(exc)) from None
    try:
        return REGISTRY[parsed.name](player, rng, **parsed.kwargs)
    except TypeError as exc:
        raise AgentSpecError(f"agent spec {spec!r}: {exc}") from None
    except ValueError as exc:
        raise AgentSpecError(f"agent spec {spec!r}: {exc}") from None


def lineage(name: str) -> frozenset[str]:
    """The registered agents whose code an agent runs: itself and the registered agents it derives from
    (`aware` runs the `mission` agent's, `minimax` the `bsr` and `domination` agents'). The heuristic agents'
    common base is scaffolding every one shares, not an agent, so it is not part of any lineage."""
    by_class = {REGISTRY[n]: n for n in REGISTRY}
    return frozenset(by_class[c] for c in REGISTRY[parse_spec(name).name].__mro__ if c in by_class)


def validate_spec(spec: "str | Mapping | Spec") -> None:
    """Build the agent once with a throwaway generator so that bad specs fail before a run starts."""
    make_agent(spec, 0, np.random.default_rng(0))


__all__ = ["Agent", "PlayerView", "REGISTRY", "register", "make_agent", "parse_spec", "validate_spec",
           "AgentSpecError", "lineage"]
