"""Agents registered by name, built from specs such as `random`, `mission:focus=0.8` or
`mission:focus=1:threshold=0.7` (parameters after colons)."""

from __future__ import annotations

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

REGISTRY: dict[str, type[Agent]] = {}


def register(cls: type[Agent]) -> type[Agent]:
    REGISTRY[cls.name] = cls
    return cls


for _cls in (RandomAgent, MissionAgent, DominationAgent, BsrAgent, MinimaxAgent, McRlAgent, McsAgent, ExpertAgent,
             AwareAgent, GBAgent):
    register(_cls)


class AgentSpecError(ValueError):
    """An agent spec names an unknown agent or parameter."""


def _parse_value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict]:
    """`'mission:focus=0.8'` -> `('mission', {'focus': 0.8})`."""
    name, *params = spec.strip().split(":")
    if name not in REGISTRY:
        raise AgentSpecError(f"unknown agent {name!r} in spec {spec!r}; known agents: {sorted(REGISTRY)}")
    kwargs = {}
    for p in params:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise AgentSpecError(f"agent spec {spec!r}: parameter {p!r} must look like name=value")
        kwargs[key] = _parse_value(value)
    return name, kwargs


def make_agent(spec: str, player: int, rng: np.random.Generator) -> Agent:
    name, kwargs = parse_spec(spec)
    try:
        return REGISTRY[name](player, rng, **kwargs)
    except TypeError as exc:
        raise AgentSpecError(f"agent spec {spec!r}: {exc}") from None
    except ValueError as exc:
        raise AgentSpecError(f"agent spec {spec!r}: {exc}") from None


def validate_spec(spec: str) -> None:
    """Build the agent once with a throwaway generator so that bad specs fail before a run starts."""
    make_agent(spec, 0, np.random.default_rng(0))


__all__ = ["Agent", "PlayerView", "REGISTRY", "register", "make_agent", "parse_spec", "validate_spec",
           "AgentSpecError"]
