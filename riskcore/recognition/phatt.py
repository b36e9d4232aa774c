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
- `khan2013`: the reference implementation's own update, exactly (`khan2013_loglik`): unnormalised factors per
  observation, setup placements and move-ins observed, a uniform prior over the explanations (`uses_extended_view`).
Card trades are not in the pending set and leave the posterior unchanged; setup placements count as reinforcements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from riskcore.recognition.features import KIND, PENDING_KINDS, Features

SCHEMES = ("equal", "simple", "proportional", "khan2013")
# the reference implementation's constants: movement/placement, defence, and the attack bonuses w
KHAN_OUTSIDE, KHAN_DEFENCE, KHAN_W_FAILED, KHAN_W_WON = 0.98, 0.02, 0.01, 0.02
KHAN_FLOOR = 1e-12  # a factor the formula drives to zero or below (more than 1/w consistent options)


@dataclass(frozen=True)
class PhattWeights:
    """Per-kind consistent (`c`) and inconsistent (`i`) weights, `lam` for the proportional scheme, and for
    `khan2013` whether T / O is the original's integer division (`intdiv`)."""

    scheme: str = "simple"
    c: dict[str, float] = field(default_factory=lambda: {k: 1.0 for k in PENDING_KINDS})
    i: dict[str, float] = field(default_factory=lambda: {k: 0.98 for k in PENDING_KINDS})
    lam: float = 0.7
    intdiv: bool = False

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
            elif key not in ("scheme", "c", "i", "lam", "intdiv"):
                raise ValueError(f"unknown PHATT parameter {key!r}: use scheme, c, i, lam, intdiv, or <kind>.c / "
                                 "<kind>.i")
        scheme = str(params.get("scheme", "simple"))
        intdiv = params.get("intdiv", 0)
        if intdiv not in (0, 1) or isinstance(intdiv, float) or (intdiv and scheme != "khan2013"):
            raise ValueError(f"intdiv is 0 or 1 and belongs to scheme=khan2013, got intdiv={intdiv!r} with "
                             f"scheme={scheme}")
        return cls(scheme, c, i, _number("lam", params.get("lam", 0.7)), bool(intdiv))

    @property
    def uses_extended_view(self) -> bool:
        """The reference implementation also observes setup placements and move-ins, from a uniform prior over
        the explanations."""
        return self.scheme == "khan2013"

    def params(self) -> tuple[tuple[str, object], ...]:
        """The parameters that matter for the scheme, in a fixed order: the canonical form of these weights.
        Per-kind weights are given as the most common value (`c`, `i`) and the kinds that differ from it."""
        if self.scheme == "equal":
            return (("scheme", "equal"),)
        if self.scheme == "khan2013":
            return (("scheme", "khan2013"),) + ((("intdiv", 1),) if self.intdiv else ())
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
    """PHATT kind index of each observation (setup placement -> reinforce) and whether it is in the pending set."""
    code = f.obs.kind_code.to_numpy()
    code = np.where(code == KIND["place"], KIND["reinforce"], code)
    return np.minimum(code, len(PENDING_KINDS) - 1), code < len(PENDING_KINDS)


def phatt_loglik(f: Features, w: PhattWeights, counts: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """(N, E) log P(obs_i | e) under the weighting scheme; 0 for observations outside the pending set."""
    if w.scheme == "khan2013":
        return khan2013_loglik(f, w.intdiv)
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


def khan2013_loglik(f: Features, intdiv: bool = False) -> np.ndarray:
    """(N, E) log factor of each observation under the reference implementation's update (no normalisation over
    the pending set; the posterior is renormalised after every observation).

    Placement, reinforcement, fortify and move-in: x 1 inside the explanation's continents, else x 0.98.
    Successful defence: x 1.02 inside, else x 1; failed defence: x 0.98 inside, else x 1. Attacks, with N the
    attack options and C the consistent ones: base = (1 - w C) / N; a failed attack (w = 0.01) gives consistent
    explanations base + w, the others base; a successful one (w = 0.02, C and T floored at 1) gives base +
    w (1 - C / N) (T / O), T the owned territories inside the explanation and O all owned territories. In the
    original T / O is an integer division (zero unless every owned territory is inside): `intdiv`.
    """
    code = f.obs.kind_code.to_numpy()
    defend_lost = code == KIND["defend_lost"]
    inside = np.where(defend_lost[:, None], ~f.consistent, f.consistent)
    factor = np.ones(f.consistent.shape)
    moves = np.isin(code, [KIND[k] for k in ("reinforce", "place", "fortify", "occupy")])
    factor[moves] = np.where(inside[moves], 1.0, KHAN_OUTSIDE)
    won_def = code == KIND["defend_won"]
    factor[won_def] = np.where(inside[won_def], 1.0 + KHAN_DEFENCE, 1.0)
    factor[defend_lost] = np.where(inside[defend_lost], 1.0 - KHAN_DEFENCE, 1.0)
    n_att = np.maximum(f.obs.n_attack.to_numpy(float), 1.0)[:, None]
    lost = code == KIND["attack_lost"]
    base = (1 - KHAN_W_FAILED * f.attack_in[lost]) / n_att[lost]
    factor[lost] = np.where(inside[lost], base + KHAN_W_FAILED, base)
    won = code == KIND["attack_won"]
    c = np.maximum(f.attack_in[won], 1.0)
    t = np.maximum(f.owned_in[won], 1.0)
    o = np.maximum(f.obs.n_owned.to_numpy(float)[won], 1.0)[:, None]
    share = np.floor(t / o) if intdiv else t / o
    base = (1 - KHAN_W_WON * c) / n_att[won]
    factor[won] = np.where(inside[won], base + KHAN_W_WON * (1 - c / n_att[won]) * share, base)
    return np.log(np.maximum(factor, KHAN_FLOOR))
