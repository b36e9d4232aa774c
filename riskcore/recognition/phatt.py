"""PHATT-style mission recognition in RISK (Geib & Goldman 2009, as applied to RISK by Khan 2013).

The pending set of player p holds, for every territory T that p owns: reinforce T, successful defence of T, failed
defence of T; and for every neighbour N of T: move T -> N if p owns N, else successful and failed attack on N.
An action is consistent with explanation e when its territory lies in e's territories (for a failed defence:
when it does not, since a player pursuing e would not lose it).

    P(obs | e) = w_e(obs) / sum_{a in pending} w_e(a)
    log P(e | obs_1..t) = log P(e) + sum_i log P(obs_i | e) - log Z_t

Weighting schemes (all weights are parameters):
- `equal`: every action weighs 1, so every explanation gets the same likelihood and the prior is unchanged.
- `simple`: a consistent and an inconsistent weight per action kind, `w = c_k` or `i_k` (defaults 1.0 / 0.98).
- `proportional`: our reading of the reference's future-work formula: the weight of an action depends on the
  proportion of consistent actions in the pending set. A player picks a consistent action with probability `lam`
  whatever that proportion, so with C_e consistent and I_e inconsistent pending actions
  w_e(consistent) = lam / C_e and w_e(inconsistent) = (1 - lam) / I_e (uniform 1 / (C_e + I_e) when C_e or I_e is 0).
  With lam = C_e / (C_e + I_e) it reduces to `equal`; a consistent action is strong evidence exactly when few
  pending actions are consistent.
- `khan2013`: the reference implementation's own update, exactly as the code that produced its published data ran
  (`khan2013_loglik`): unnormalised factors per observation, a uniform prior over the explanations (`Recogniser.prior`);
  `variant=head` is the later code's successful-attack weight.
Card trades are not in the pending set and leave the posterior unchanged; setup placements count as reinforcements
and the armies moved into a conquered territory as a move there (the reference's "army movement").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from riskcore.recognition.features import KIND, PENDING_KINDS, Features

SCHEMES = ("equal", "simple", "proportional", "khan2013")
KHAN_VARIANTS = ("thesis", "head")  # the code that produced the reference's data; its later successful-attack weight
# the reference implementation's constants: Java float literals 0.98f and 1.02f widened to double (they show at
# the 1e-9 level), and the attack bonuses w, doubles
KHAN_OUTSIDE, KHAN_DEFENCE_WON = float(np.float32(0.98)), float(np.float32(1.02))
KHAN_W_FAILED, KHAN_W_WON = 0.01, 0.02


@dataclass(frozen=True)
class PhattWeights:
    """Per-kind consistent (`c`) and inconsistent (`i`) weights, `lam` for the proportional scheme, and for
    `khan2013` which version of the reference's code (`variant`)."""

    scheme: str = "simple"
    c: dict[str, float] = field(default_factory=lambda: {k: 1.0 for k in PENDING_KINDS})
    i: dict[str, float] = field(default_factory=lambda: {k: 0.98 for k in PENDING_KINDS})
    lam: float = 0.7
    variant: str = "thesis"

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"unknown PHATT scheme {self.scheme!r}; known: {SCHEMES}")
        for name, table in (("c", self.c), ("i", self.i)):
            unknown = set(table) - set(PENDING_KINDS)
            if unknown:
                raise ValueError(f"unknown action kind(s) {sorted(unknown)} in weights {name}; "
                                 f"known: {PENDING_KINDS}")
            for k, v in table.items():
                if not v > 0:
                    raise ValueError(f"weight {name}.{k} must be positive, got {v}")
        if not 0 < self.lam < 1:
            raise ValueError(f"lam must be in (0, 1), got {self.lam}")
        if self.variant not in KHAN_VARIANTS or (self.variant != "thesis" and self.scheme != "khan2013"):
            raise ValueError(f"variant is one of {KHAN_VARIANTS} and belongs to scheme=khan2013, got "
                             f"variant={self.variant!r} with scheme={self.scheme}")

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> "PhattWeights":
        """Weights from recogniser parameters (`riskcore.params`): `scheme`, `c` and `i` (every kind),
        `<kind>.c` and `<kind>.i` (one kind, after the general ones), `lam`."""
        c = {k: 1.0 for k in PENDING_KINDS}
        i = {k: 0.98 for k in PENDING_KINDS}
        for key in ("c", "i"):
            if key in params:
                (c if key == "c" else i).update({k: _number(key, params[key]) for k in PENDING_KINDS})
        for key, value in params.items():
            kind, dot_, which = key.rpartition(".")
            if dot_ and which in ("c", "i"):
                if kind not in PENDING_KINDS:
                    raise ValueError(f"unknown action kind {kind!r} in weight {key!r}; known: {PENDING_KINDS}")
                (c if which == "c" else i)[kind] = _number(key, value)
            elif key not in ("scheme", "c", "i", "lam", "variant"):
                raise ValueError(f"unknown PHATT parameter {key!r}: use scheme, c, i, lam, variant, or <kind>.c / "
                                 "<kind>.i")
        return cls(str(params.get("scheme", "simple")), c, i, _number("lam", params.get("lam", 0.7)),
                   str(params.get("variant", "thesis")))

    def params(self) -> tuple[tuple[str, object], ...]:
        """The parameters that matter for the scheme, in a fixed order: the canonical form of these weights.
        Per-kind weights are given as the most common value (`c`, `i`) and the kinds that differ from it."""
        if self.scheme == "equal":
            return (("scheme", "equal"),)
        if self.scheme == "khan2013":
            return (("scheme", "khan2013"),) + ((("variant", self.variant),) if self.variant != "thesis" else ())
        if self.scheme == "proportional":
            return (("scheme", "proportional"), ("lam", self.lam))
        out: list[tuple[str, object]] = [("scheme", self.scheme)]
        overrides = []
        for key, table in (("c", self.c), ("i", self.i)):
            values = [table[k] for k in PENDING_KINDS]
            common = max(values, key=values.count)  # ties: the first kind's value
            out.append((key, common))
            overrides += [(f"{k}.{key}", table[k]) for k in PENDING_KINDS if table[k] != common]
        return tuple(out + overrides)


def _number(key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"PHATT weight {key!r} must be a number, got {value!r}")
    return float(value)


def pending_counts(f: Features) -> tuple[np.ndarray, np.ndarray]:
    """(N, E, 6) consistent counts and (N, 1, 6) totals of the pending set, per PHATT kind."""
    n_owned = f.obs.n_owned.to_numpy(float)[:, None]
    n_att = f.obs.n_attack.to_numpy(float)[:, None]
    n_fort = f.obs.n_fortify.to_numpy(float)[:, None]
    cons = np.stack([f.owned_in, f.owned_in, n_owned - f.owned_in, f.fortify_in, f.attack_in, f.attack_in], axis=-1)
    totals = np.stack([n_owned, n_owned, n_owned, n_fort, n_att, n_att], axis=-1)
    return cons, totals


def _observed_kind(f: Features) -> tuple[np.ndarray, np.ndarray]:
    """PHATT kind index of each observation (a setup placement is a reinforcement, armies moved into a conquered
    territory a move, as the reference counted them) and whether it is in the pending set."""
    code = f.obs.kind_code.to_numpy()
    code = np.where(code == KIND["place"], KIND["reinforce"], code)
    code = np.where(code == KIND["occupy"], KIND["fortify"], code)
    return np.minimum(code, len(PENDING_KINDS) - 1), code < len(PENDING_KINDS)


def phatt_loglik(f: Features, w: PhattWeights, counts: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """(N, E) log P(obs_i | e) under the weighting scheme; 0 for observations outside the pending set."""
    if w.scheme == "khan2013":
        return khan2013_loglik(f, w.variant)
    kind, in_pending = _observed_kind(f)
    consistent = f.consistent
    if w.scheme == "equal":
        return np.zeros(consistent.shape)
    if w.scheme == "simple":
        wc = np.array([w.c[k] for k in PENDING_KINDS])
        wi = np.array([w.i[k] for k in PENDING_KINDS])
        # sum_k c_k cons_k + i_k (n_k - cons_k) = sum_k i_k n_k + sum_k (c_k - i_k) cons_k; the six kinds share
        # three consistent-count matrices (owned, attack and fortify targets), so four N x E terms suffice
        d = wc - wi
        n_owned = f.obs.n_owned.to_numpy(float)[:, None]
        base = (wi[:3].sum() * n_owned + wi[3] * f.obs.n_fortify.to_numpy(float)[:, None]
                + (wi[4] + wi[5]) * f.obs.n_attack.to_numpy(float)[:, None])
        total = (base + (d[0] + d[1] - d[2]) * f.owned_in + d[2] * n_owned + d[3] * f.fortify_in
                 + (d[4] + d[5]) * f.attack_in)
        own = np.where(consistent, wc[kind][:, None], wi[kind][:, None])
        ll = np.log(own) - np.log(total)
    else:
        cons, totals = counts if counts is not None else pending_counts(f)
        c_all = cons.sum(axis=-1)
        n_all = totals.sum(axis=-1)
        i_all = n_all - c_all
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(consistent, w.lam / c_all, (1 - w.lam) / i_all)
            p = np.where((c_all == 0) | (i_all == 0), 1.0 / n_all, p)
        ll = np.log(p)
    return np.where(in_pending[:, None], ll, 0.0)


def khan2013_loglik(f: Features, variant: str = "thesis") -> np.ndarray:
    """(N, E) log factor of each observation under the reference implementation's update (no normalisation over
    the pending set; the posterior is renormalised after every observation). Checked value for value against the
    reference's own output on 316 recorded games (`tests/recognition/test_khan2013_golden.py`).

    Placement (setup or reinforcement, one factor per placing command), fortify and move-in: x 1 inside the
    explanation's continents, else x 0.98f. Successful defence: x 1.02f inside, else x 1; failed defence: x 0.98f
    inside, else x 1. Attacks, with N the attacker's distinct enemy neighbours and c_e those inside e (counted
    after the conquest for a successful one): base_e = (1 - w c_e) / N; a failed attack (w = 0.01) gives base_e + w
    inside, base_e outside; a successful one (w = 0.02) the same. `variant="head"`, the reference's later code
    (not what produced its published numbers), weighs a successful attack differently: c_e floored at 1, inside
    base_e + w (1 - c_e / N) floor(t_e / O), t_e the attacker's territories inside e (at least 1), O all of them.
    """
    code = f.obs.kind_code.to_numpy()
    defend_lost = code == KIND["defend_lost"]
    inside = np.where(defend_lost[:, None], ~f.consistent, f.consistent)
    factor = np.ones(f.consistent.shape)
    moves = np.isin(code, [KIND[k] for k in ("reinforce", "place", "fortify", "occupy")])
    factor[moves] = np.where(inside[moves], 1.0, KHAN_OUTSIDE)
    won_def = code == KIND["defend_won"]
    factor[won_def] = np.where(inside[won_def], KHAN_DEFENCE_WON, 1.0)
    factor[defend_lost] = np.where(inside[defend_lost], KHAN_OUTSIDE, 1.0)
    n = f.obs.n_targets.to_numpy(float)[:, None]
    for kind, w in (("attack_lost", KHAN_W_FAILED), ("attack_won", KHAN_W_WON)):
        rows = code == KIND[kind]
        c, big_n, ins = f.targets_in[rows], n[rows], inside[rows]
        if variant == "head" and kind == "attack_won":
            c = np.maximum(c, 1.0)
            owned = f.owned_in[rows] + ins  # the conquered territory is the attacker's now
            share = np.floor(np.maximum(owned, 1.0) / (f.obs.n_owned.to_numpy(float)[rows, None] + 1))
            bonus = w * (1 - c / np.maximum(big_n, 1)) * share
        else:
            bonus = w
        base = (1 - w * c) / np.maximum(big_n, 1)
        # no enemy neighbour left (N = 0): only the game-winning conquest, never observed; no evidence then
        factor[rows] = np.where(big_n > 0, np.where(ins, base + bonus, base), 1.0)
    return np.log(factor)
