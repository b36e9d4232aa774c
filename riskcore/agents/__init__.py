"""Agents registered by name, built from specs such as `random`, `mission:focus=0.8` or
`mission:focus=1:threshold=0.7` (`riskcore.params`: parameters after colons, or a mapping)."""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Mapping

import numpy as np

from riskcore.agents.aware import AwareAgent
from riskcore.agents.base import Agent, PlayerView
from riskcore.agents.bsr import BsrAgent
from riskcore.agents.expert import ExpertAgent
from riskcore.agents.gb_agent import GBAgent
from riskcore.agents.mcrl import McRlAgent
from riskcore.agents.mcs import McsAgent
from riskcore.agents.heuristic import DominationAgent, MissionAgent
from riskcore.agents.minimax_agent import MinimaxAgent
from riskcore.agents.random_agent import RandomAgent
from riskcore.params import Spec, SpecError, check_types, parse

REGISTRY: dict[str, type[Agent]] = {}


def register(cls: type[Agent]) -> type[Agent]:
    REGISTRY[cls.name] = cls
    return cls


for _cls in (RandomAgent, MissionAgent, DominationAgent, BsrAgent, MinimaxAgent, McRlAgent, McsAgent, ExpertAgent,
             AwareAgent, GBAgent):
    register(_cls)


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


def validate_spec(spec: "str | Mapping | Spec") -> None:
    """Build the agent once with a throwaway generator so that bad specs fail before a run starts."""
    make_agent(spec, 0, np.random.default_rng(0))


__all__ = ["Agent", "PlayerView", "REGISTRY", "register", "make_agent", "parse_spec", "validate_spec",
           "AgentSpecError"]
