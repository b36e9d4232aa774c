"""Training the learned recogniser (`recognition.evidence`) on the simulated population (`population`), and the
protocol that names riskcore's recogniser: `riskcore train-recogniser` (`make recogniser-model`).

Declared before its candidates were scored on any other program's play, and not changed after:
- Candidates (`CANDIDATES`): the evidence model on the evidence features; the same with the log posteriors of
  the reference's recogniser and the play-style mixture stacked in; the play-style mixture itself (its setting as
  chosen on riskcore's heuristic play, `MIXTURE`, with a softmax temperature fitted on the training rows).
- Rows: every player holding a continent card, at the reference's game clock's checkpoints (10, 30, 50, 70 and 100%
  of the game's turn ends), after its last observation there (a player not yet observed has no row).
- Naming: leave-one-lineage-out. Each lineage of decision code (`population.lineage`) is held out in turn: each
  candidate is fitted on the other lineage's players and scored on the held-out one's. The candidates are compared
  on the held-out lineages none of them shares code with (`SHARES_CODE`, `naming_folds`): the named recogniser has
  the lowest mean held-out log loss there (games weighted equally), and the paired bootstrap interval (over games)
  of its difference to each other candidate is reported with the choice.
- The named recogniser is then fitted on the whole population; its models are written to `models/` with the
  recipe (`population.recipe`) and a digest, and the protocol's tables beside them (`PROTOCOL_FILE`).
- Learning curve: the evidence models fitted on the first 10^3, 10^4, 10^5 games of the population (a prefix of
  every run), scored on the development families (`DEVELOPMENT`: play that other programs recorded and that was
  looked at while recognisers were built).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore import paths
from riskcore.recognition import evidence as ev
from riskcore.recognition.features import load_features
from riskcore.recognition.metrics import bootstrap_ci
from riskcore.recognition.pipeline import CHECKPOINTS, ensure_features_many, game_chunks, game_clock_rows, turn_ends
from riskcore.recognition.recognisers import Recogniser
from riskcore.experiments.recognition.population import SEED, lineage, population, recipe

MIXTURE = "mixture:beta=5:eps=0.05:rho=0.5:temper=0.5"
CANDIDATES = {"evidence": "evidence:model=evidence", "evidence-stacked": "evidence:model=evidence-stacked",
              "mixture": MIXTURE}
# the lineages each candidate shares decision code with: scored on them, it would be scored in-model
SHARES_CODE = {"evidence": (), "evidence-stacked": ("heuristic",), "mixture": ("heuristic",)}
MODELS = {"evidence": ev.BASE_FEATURES, "evidence-stacked": ev.BASE_FEATURES + ev.STACKED_FEATURES}
STACKED = dict(ev.STACKED_SPECS)
CURVE_SIZES = (1_000, 10_000, 100_000)
CURVE_STREAM = 1  # the learning curve's bootstrap draws from its own stream, so the naming's never move
DEVELOPMENT = {"fork-ai w100": ("fork-ai", 100), "fork-ai w4": ("fork-ai", 4), "domination corpus": ("corpus", 0),
               "domination ai": ("peer", 0)}
PROTOCOL_FILE = "recogniser-protocol.json"
ROW_CHUNK = 100  # games a task
ROWS_VERSION = 1  # of what `chunk_rows` computes: a change makes the cached rows stale
UNIFORM_LOSS = float(np.log(6))


@dataclass
class Rows:
    """Training or scoring rows: (player, checkpoint) with every card's features."""

    x: np.ndarray  # (R, C, F) float32, F = the base features then the stacked ones
    card: np.ndarray  # (R,) true card
    ruled_out: np.ndarray  # (R, C)
    mixture: np.ndarray  # (R, C) the play-style mixture's card probabilities (a candidate of its own)
    meta: pd.DataFrame  # run, game_id, player, point, agent, lineage, n_players

    def select(self, mask: np.ndarray) -> "Rows":
        return Rows(self.x[mask], self.card[mask], self.ruled_out[mask], self.mixture[mask],
                    self.meta[mask].reset_index(drop=True))

    @staticmethod
    def concat(parts: list["Rows"]) -> "Rows":
        parts = [p for p in parts if len(p.card)]
        if not parts:
            raise ValueError("no scored rows (no player with a continent card)")
        return Rows(np.concatenate([p.x for p in parts]), np.concatenate([p.card for p in parts]),
                    np.concatenate([p.ruled_out for p in parts]), np.concatenate([p.mixture for p in parts]),
                    pd.concat([p.meta for p in parts], ignore_index=True))

    def features(self, names: tuple[str, ...]) -> np.ndarray:
        every = ev.BASE_FEATURES + ev.STACKED_FEATURES
        return self.x[:, :, [every.index(n) for n in names]]


def chunk_rows(run: str, data_dir: Path | None, games: tuple[int, int]) -> Rows:
    """The scored rows of a chunk of a run's games (a parallel task)."""
    f = load_features(run, "cards6", data_dir, "full", games)
    rows = game_clock_rows(f, turn_ends(run, data_dir, games), CHECKPOINTS)
    truth = f.truth.set_index(["game_id", "player"])
    keys = pd.MultiIndex.from_frame(rows[["game_id", "player"]])
    rows["card"] = truth.card.reindex(keys).to_numpy()
    rows["agent"] = truth.agent.reindex(keys).to_numpy()
    rows = rows[(rows.card >= 0) & (rows.row >= 0)].reset_index(drop=True)
    r = rows.row.to_numpy()
    posts = {name: f.hyp.card_probs(Recogniser.from_spec(spec).posterior(f, run, data_dir)[r])
             for name, spec in STACKED.items()}
    full = {name: np.zeros((f.n, len(f.hyp.cards))) for name in posts}
    for name, p in posts.items():
        full[name][r] = p
    x = ev.card_features(f, r, full).astype(np.float32)
    seats = f.truth.groupby("game_id").player.count()
    meta = pd.DataFrame({"run": run, "game_id": rows.game_id.to_numpy(), "player": rows.player.to_numpy(),
                         "point": rows.point.to_numpy(), "agent": rows.agent.to_numpy(),
                         "lineage": [lineage(a) for a in rows.agent], 
                         "n_players": seats.reindex(rows.game_id.to_numpy()).to_numpy()})
    return Rows(x, rows.card.to_numpy().astype(np.int64), ev.ruled_out_cards(f, r), posts["log_mixture"], meta)


def collect(runs: dict[str, int | None], data_dir: Path | None, workers: int | None = None,
            dask: str | None = None, progress: bool = True) -> Rows:
    """The rows of several runs (each up to its game id limit, None for all), in task order."""
    from riskcore.parallel import in_task_order, run_tasks

    tasks = []
    for run, limit in runs.items():
        for lo, hi in game_chunks(run, data_dir, ROW_CHUNK):
            if limit is None or lo < limit:
                tasks.append((run, data_dir, (lo, hi if limit is None else min(hi, limit - 1))))
    return Rows.concat(in_task_order(run_tasks(chunk_rows, tasks, workers, dask, desc="rows", progress=progress)))


# ---- fitting and scoring ------------------------------------------------------------------------------------------

def fit(rows: Rows, model: str, training: dict | None = None) -> ev.EvidenceModel:
    return ev.fit_model(rows.features(MODELS[model]), rows.card, rows.ruled_out, MODELS[model],
                        training=training)


def mixture_temperature(rows: Rows) -> float:
    """The play-style mixture's softmax temperature fitted on `rows` (its card ranking unchanged)."""
    from scipy.optimize import minimize_scalar
    from scipy.special import logsumexp

    logp = np.log(np.clip(rows.mixture, 1e-300, 1))
    m = np.arange(len(rows.card))

    def loss(log_t: float) -> float:
        s = logp / np.exp(log_t)
        return float(-(s[m, rows.card] - logsumexp(s, axis=1)).mean())

    return float(np.exp(minimize_scalar(loss, bounds=(-3, 3), method="bounded", options={"xatol": 1e-6}).x))


def card_probs(rows: Rows, candidate: str, fitted) -> np.ndarray:
    """(R, C) a candidate's card probabilities on `rows` (`fitted`: its model, or the mixture's temperature)."""
    if candidate == "mixture":
        return ev.softmax_cards(np.log(np.clip(rows.mixture, 1e-300, 1)), np.zeros(rows.mixture.shape, bool), fitted)
    return fitted.card_posterior(rows.features(fitted.features), rows.ruled_out)


def row_scores(rows: Rows, probs: np.ndarray) -> pd.DataFrame:
    """Per row: top-1 (ties split), log loss and gain over uniform."""
    from riskcore.recognition.metrics import card_metrics

    m = card_metrics(probs, rows.card)
    return rows.meta.assign(top1=m.top1.to_numpy(), log_loss=m.log_loss.to_numpy(),
                            gain=UNIFORM_LOSS - m.log_loss.to_numpy())


def fit_candidate(rows: Rows, candidate: str, training: dict | None = None):
    return mixture_temperature(rows) if candidate == "mixture" else fit(rows, candidate, training)


def naming_folds(lineages: set[str]) -> list[str]:
    """The held-out lineages the candidates are compared on: those no candidate shares decision code with (the
    play-style mixture's model of play is the heuristic agents' valuation and staging, and the stacked model
    weighs the mixture's posterior, so on heuristic play both would be scored in-model)."""
    shared = set().union(*SHARES_CODE.values())
    return sorted(lineages - shared)


def lolo(rows: Rows, rng: np.random.Generator, n_boot: int = 2000) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Leave-one-lineage-out: (every candidate's scores on every held-out lineage, the choice table on the
    naming folds with the paired intervals of the named candidate's difference to each other one, the named
    candidate)."""
    scored = []
    lineages = rows.meta.lineage.to_numpy()
    for held in sorted(set(lineages)):
        test, train = lineages == held, lineages != held
        if not train.any():
            continue
        for candidate in CANDIDATES:
            fitted = fit_candidate(rows.select(train), candidate)
            scored.append(row_scores(rows.select(test), card_probs(rows.select(test), candidate, fitted))
                          .assign(candidate=candidate, held_out=held,
                                  in_model=held in SHARES_CODE[candidate]))
    scores = pd.concat(scored, ignore_index=True)
    folds = naming_folds(set(lineages))
    if not folds:
        raise ValueError("no lineage of the population is held out from every candidate: nothing to name on")
    per_game = (scores[scores.held_out.isin(folds)]
                .groupby(["candidate", "run", "game_id"])[["log_loss", "top1", "gain"]].mean())
    table = per_game.groupby("candidate").log_loss.mean().sort_values()
    named = str(table.index[0])
    wide = per_game.log_loss.unstack("candidate")
    choice = []
    for other in table.index:
        diff = (wide[named] - wide[other]).to_numpy()
        lo, hi = bootstrap_ci(diff, rng, n_boot) if other != named else (np.nan, np.nan)
        every = scores[scores.candidate == other].groupby(["held_out", "run", "game_id"]).log_loss.mean()
        choice.append({"candidate": other, "log_loss": float(table[other]),
                       "gain": float(per_game.gain.unstack("candidate")[other].mean()),
                       "top1": float(per_game.top1.unstack("candidate")[other].mean()),
                       "named_minus_this": float(np.nanmean(diff)) if other != named else 0.0,
                       "ci_low": lo, "ci_high": hi, "games": int(len(diff)), "named": other == named,
                       "folds": ", ".join(folds),
                       **{f"log_loss_held_{h}": float(every.xs(h).mean()) for h in sorted(set(scores.held_out))}})
    return scores, pd.DataFrame(choice), named


def learning_curve(rows: Rows, sizes: tuple[int, ...], total: int, dev: dict[str, Rows],
                   whole: dict[str, ev.EvidenceModel] | None = None, rng: np.random.Generator | None = None,
                   n_boot: int = 1000) -> pd.DataFrame:
    """The evidence models fitted on the population's first `size` games (a prefix of every run), scored on the
    development families with bootstrap intervals over their games, and each size's gain less the smallest size's,
    paired over the same games (does more training help?); `whole`: the models already fitted on all `total`
    games."""
    rng = rng if rng is not None else np.random.default_rng(np.random.SeedSequence([SEED, CURVE_STREAM]))
    out = []
    cells = {c.run: c.games for c in population(total)}
    first: dict[tuple[str, str], pd.Series] = {}
    for size in sizes:
        if size > total:
            continue
        limit = rows.meta.run.map(lambda r: cells[r] * size / total).to_numpy()
        subset = rows.select(rows.meta.game_id.to_numpy() < limit)
        for model in MODELS:
            fitted = whole[model] if whole and size == total else fit(subset, model)
            for family, d in dev.items():
                s = row_scores(d, card_probs(d, model, fitted))
                per_game = s.groupby("game_id")[["log_loss", "gain"]].mean()
                last = s[s.point == 1.0].groupby("game_id").top1.mean()
                gain = per_game.gain
                base = first.setdefault((model, family), gain)
                gain_lo, gain_hi = bootstrap_ci(gain.to_numpy(), rng, n_boot)
                top_lo, top_hi = bootstrap_ci(last.to_numpy(), rng, n_boot)
                step = (gain - base.reindex(gain.index)).to_numpy()
                step_lo, step_hi = bootstrap_ci(step, rng, n_boot)
                out.append({"games": size, "model": model, "family": family, "training_rows": len(subset.card),
                            "top1_at_100": float(last.mean()), "top1_ci_low": top_lo, "top1_ci_high": top_hi,
                            "log_loss": float(per_game.log_loss.mean()),
                            # log loss is ln 6 less the gain, game by game: its interval is the gain's, mirrored
                            "log_loss_ci_low": UNIFORM_LOSS - gain_hi, "log_loss_ci_high": UNIFORM_LOSS - gain_lo,
                            "gain": float(gain.mean()), "gain_ci_low": gain_lo, "gain_ci_high": gain_hi,
                            "gain_less_smallest": float(step.mean()), "gain_less_smallest_ci_low": step_lo,
                            "gain_less_smallest_ci_high": step_hi, "dev_games": int(len(gain))})
    return pd.DataFrame(out)


# ---- the driver ----------------------------------------------------------------------------------------------------

def simulate_population(games: int, data_dir: Path | None, workers: int | None, dask: str | None,
                        progress: bool, seed: int = SEED) -> list[str]:
    from riskcore.simulate import simulate_many

    specs = population_specs(games, seed)
    there = runs_already_there(specs, data_dir)
    todo = [s for s in specs if s.run not in there]
    if todo:
        simulate_many(todo, data_dir, workers, dask, progress, desc="simulate population")
        ensure_features_many([s.run for s in todo], "cards6", data_dir, rebuild=True, workers=workers,
                             dask_address=dask, progress=progress)
    ensure_features_many(sorted(there), "cards6", data_dir, workers=workers, dask_address=dask, progress=progress)
    return [s.run for s in specs]


def population_specs(games: int, seed: int) -> list:
    """The population's runs as `riskcore simulate` plays them."""
    from riskcore.simulate import RunSpec, default_chunk

    return [RunSpec(c.run, c.games, c.config, c.agents, c.seed,
                    chunk=min(default_chunk(c.games), 25 if c.lineage == "random" else 250))
            for c in population(games, seed)]


def features_of_population(games: int, seed: int, data_dir: Path | None, workers: int | None, dask: str | None,
                           progress: bool) -> None:
    """For a population simulated already (`--reuse`): refuse if any of its runs is missing or was played from
    another spec, and build the features a run still lacks (a training stopped part way leaves some unbuilt)."""
    specs = population_specs(games, seed)
    there = runs_already_there(specs, data_dir)
    missing = [s.run for s in specs if s.run not in there]
    if missing:
        raise ValueError(f"--reuse: {len(missing)} run(s) of the {games:,}-game population are not in "
                         f"{paths.data_dir(data_dir)} as its recipe plays them (first: {missing[0]!r}); "
                         "train without --reuse to simulate them")
    ensure_features_many([s.run for s in specs], "cards6", data_dir, workers=workers, dask_address=dask,
                         progress=progress)


def runs_already_there(specs: list, data_dir: Path | None) -> set[str]:
    """The runs of `specs` the data directory holds already, simulated from the same spec by this engine version
    (a population grown or changed in part plays only what is new)."""
    from riskcore import ENGINE_VERSION
    from riskcore.db import DataError, query

    try:
        held = query("SELECT run, config, engine_version FROM runs", [], data_dir)
    except (DataError, Exception):  # no database or no runs yet
        return set()
    have = dict(zip(held.run, zip(held.config, held.engine_version)))
    return {s.run for s in specs if have.get(s.run) == (s.to_json(), ENGINE_VERSION)}


def import_development(data_dir: Path | None, workers: int | None, progress: bool) -> dict[str, str]:
    """The development families' logs imported as runs (`dev-...`), on the map each was recorded on."""
    from riskcore.domination import import_logs
    from riskcore.experiments.recognition.protocol import BORDERS
    from riskcore.recognition.pipeline import ensure_features
    from riskcore.experiments.recognition.peer_family import PEER_GAMES, peer_logs

    runs = {}
    for family, (source, weight) in DEVELOPMENT.items():
        if source == "peer":
            logs = peer_logs(data_dir, PEER_GAMES)
            if not logs:  # Domination's AI cannot be played here
                continue
        else:
            folder = paths.datasets_dir() / "domination" / source
            logs = sorted(folder.glob(f"fork-w{weight}-*.log.gz" if weight else "*.log.gz"))
        run = "dev-" + family.replace(" ", "-")
        import_logs(logs, run, data_dir, borders=BORDERS[source])
        ensure_features(run, "cards6", data_dir, rebuild=True, workers=workers, progress=progress)
        runs[family] = run
    return runs


def population_rows(games: int, seed: int, data_dir: Path | None, workers: int | None, dask: str | None,
                    progress: bool) -> Rows:
    """The population's rows, kept in the data directory's cache (keyed by the recipe, the feature code and
    `ROWS_VERSION`):
    fitting again, or scoring more families, needs no second pass over the games."""
    import hashlib

    key = hashlib.sha256((json.dumps([recipe(games, seed), STACKED, ROWS_VERSION], sort_keys=True)
                          + Path(ev.__file__).read_text()).encode()).hexdigest()[:16]
    path = paths.cache_dir(data_dir) / f"evidence-rows-{key}.npz"
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            meta = pd.DataFrame({c: z[f"meta_{c}"] for c in ROW_META})
            return Rows(z["x"], z["card"], z["ruled_out"], z["mixture"], meta)
    rows = collect({c.run: None for c in population(games, seed)}, data_dir, workers, dask, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, x=rows.x, card=rows.card, ruled_out=rows.ruled_out, mixture=rows.mixture,
             **{f"meta_{c}": _plain_column(rows.meta[c]) for c in ROW_META})
    tmp.replace(path)
    return rows


def _plain_column(column: pd.Series) -> np.ndarray:
    """A column as numpy can save it without pickling: text as unicode, numbers as they are."""
    values = column.to_numpy()
    return values.astype(str) if values.dtype == object else values


ROW_META = ("run", "game_id", "player", "point", "agent", "lineage", "n_players")


def train(games: int = 100_000, data_dir: Path | None = None, workers: int | None = None, dask: str | None = None,
          progress: bool = True, out: Path | None = None, seed: int = SEED, n_boot: int = 2000,
          simulate: bool = True) -> dict:
    """Simulate the population (unless `simulate` is False: its runs are there already), apply the naming
    protocol, fit the models on the whole population and write them with the protocol's tables to `out`
    (default: the models folder)."""
    import sklearn

    out = out or paths.models_dir()
    if simulate:
        simulate_population(games, data_dir, workers, dask, progress, seed)
    else:
        features_of_population(games, seed, data_dir, workers, dask, progress)
    rows = population_rows(games, seed, data_dir, workers, dask, progress)
    dev_runs = import_development(data_dir, workers, progress)
    dev = {family: collect({run: None}, data_dir, workers, dask, progress) for family, run in dev_runs.items()}
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    scores, choice, named = lolo(rows, rng, n_boot)
    training = {"population": recipe(games, seed), "rows": int(len(rows.card)),
                "library": f"scikit-learn {sklearn.__version__}"}
    written, fitted = {}, {}
    for model in MODELS:
        fitted[model] = fit(rows, model, training)
        written[model] = fitted[model].digest
        _write(out / f"{model}.json", fitted[model].to_json())
    temperature = mixture_temperature(rows)
    spec = (CANDIDATES[named] if named != "mixture"
            else Recogniser.from_spec(f"{MIXTURE}:calibration={float(f'{temperature:.4g}'):g}").setting)
    curve = learning_curve(rows, CURVE_SIZES, games, dev, fitted,
                           np.random.default_rng(np.random.SeedSequence([seed, CURVE_STREAM])), n_boot)
    folds = (scores.groupby(["candidate", "held_out", "in_model", "run", "game_id"])[["log_loss", "top1", "gain"]]
             .mean().groupby(["candidate", "held_out", "in_model"]).agg(["mean", "count"]))
    folds.columns = [f"{a}_{b}" for a, b in folds.columns]
    protocol = {"named": named, "spec": spec, "candidates": CANDIDATES, "shares_code": SHARES_CODE,
                "games": games, "seed": seed, "rows": int(len(rows.card)),
                "lineages": rows.meta.lineage.value_counts().sort_index().to_dict(),
                "choice": choice.to_dict("records"), "folds": folds.reset_index().to_dict("records"),
                "learning_curve": curve.to_dict("records"), "models": written,
                "mixture_temperature": temperature}
    protocol = _strict(protocol)
    _write(out / PROTOCOL_FILE, json.dumps(protocol, indent=1, sort_keys=True, allow_nan=False) + "\n")
    return protocol


def _strict(value):
    """`value` as strict JSON holds it: numpy numbers as Python's, a missing number (NaN) as null."""
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value


def _write(path: Path, text: str) -> None:
    from riskcore.storage import write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, text)


def load_protocol(folder: Path | None = None) -> dict:
    path = (folder or paths.models_dir()) / PROTOCOL_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {path}: run `make recogniser-model`")
    return json.loads(path.read_text())
