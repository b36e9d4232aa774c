"""The `riskcore` command line. Defaults come from `riskcore.paths`; errors name the offending input."""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys
from pathlib import Path

from riskcore import ENGINE_VERSION
from riskcore.experiments import EXPERIMENT_SEED


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def _chunk(text: str) -> int | None:
    return None if text == "auto" else _positive(text)  # None: `simulate.default_chunk` of the run's games


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(_positive(x) for x in text.split(","))


def _seed_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integer seeds, got {text!r}") from None


def _parallel(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=_positive, default=None, help="local processes (default: all cores)")
    parser.add_argument("--dask", metavar="ADDRESS", default=None,
                        help="run on a Dask distributed scheduler, e.g. tcp://host:8786 (same results)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, default=None, help="data directory (default: data/ or $RISKCORE_DATA)")


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, except where there is none to show."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.default is argparse.SUPPRESS \
                or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="riskcore", description="Reproducible RISK engine, traces and experiments.")
    p.add_argument("--version", action="version", version=f"riskcore engine {ENGINE_VERSION}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add = lambda name, **kw: sub.add_parser(name, formatter_class=_Help, **kw)  # noqa: E731

    s = add("simulate", help="play seeded games and register their traces in DuckDB")
    s.add_argument("--run", required=True, help="run name (replaces an existing run of that name)")
    s.add_argument("--games", type=_positive, required=True, help="games to play")
    s.add_argument("--players", type=_positive, default=4, help="players per game (2-6)")
    s.add_argument("--agents", default="mission",
                   help="comma-separated agent specs, cycled over the seats, e.g. mission:focus=0.8,random")
    s.add_argument("--mode", choices=["mission", "domination"], default="mission",
                   help="secret missions, or conquer every territory")
    s.add_argument("--seed", type=int, default=0, help="run seed: every game's seed is derived from it")
    s.add_argument("--board", default="classic", help="packaged board name or path to a board JSON file")
    s.add_argument("--deal", choices=["random", "claim"], default="random",
                   help="territories dealt at random or claimed in turn")
    s.add_argument("--setup-batch", type=_positive, default=1, help="armies each player places per setup turn")
    s.add_argument("--card-values", choices=["escalating", "fixed"], default="escalating",
                   help="card trade values: the escalating table or fixed values per set")
    s.add_argument("--card-cap", type=_positive, default=None, help="cap on escalating trade values (none by default)")
    s.add_argument("--fortify", choices=["adjacent", "connected"], default="adjacent",
                   help="fortify to an adjacent territory, or along a path of own territories")
    s.add_argument("--turn-cap", type=_positive, default=400, help="player turns after which a game is a draw")
    s.add_argument("--chunk", type=_chunk, default="auto",
                   help="games per Parquet part (does not change results); auto: 25 up to 2,500 games, then a "
                        "hundredth of the run up to 1,000")
    _parallel(s)
    _data_dir(s)

    r = add("replay", help="rebuild recorded games from their Parquet traces, without an RNG, and check every event, "
                           "snapshot, games row and players row")
    r.add_argument("--run", required=True)
    r.add_argument("--game", type=int, default=None, help="one game id (default: every game of the run)")
    r.add_argument("--print", dest="show_events", action="store_true", help="print the game's events")
    _data_dir(r)

    im = add("import", help="import games another program recorded as a run (replayed and checked by the engine)")
    im.add_argument("format", choices=["domination"], help="the recording program: Domination's command logs")
    im.add_argument("logs", nargs="+", type=Path, metavar="LOG", help=".log or .log.gz files (one or more games each)")
    im.add_argument("--run", required=True, help="run name (replaces an existing run of that name)")
    im.add_argument("--missions", type=int, choices=[6, 14], default=None,
                    help="the recording program's mission list: the 6 continent missions or its full list "
                         "(default: read from each log, which is refused when it cannot be told)")
    im.add_argument("--drop-empty-battles", action="store_true",
                    help="drop battles retreated before any roll (kept by default as failed attacks)")
    im.add_argument("--borders", type=int, choices=[81, 82, 83], default=83,
                    help="the map the games were played on: 81 borders (Domination's risk.map), 82 (the reference "
                         "study's map, its human games) or all 83; adjacency matters to the reference's recogniser")
    im.add_argument("--skip-invalid", action="store_true",
                    help="import every game that replays and list each one that does not with its file, line and "
                         "reason (default: one bad game stops the import, nothing written)")
    _data_dir(im)

    d = add("db", help="database schema and row counts; --rebuild re-derives it from the Parquet traces")
    d.add_argument("--rebuild", action="store_true", help="drop every table and register every Parquet tree again")
    d.add_argument("--register", metavar="RUN", default=None,
                   help="register a run that simulate kept aside because the database was locked")
    d.add_argument("--sql", default=None, help="run one read-only query (SELECT, DESCRIBE, ...) and print the result")
    _data_dir(d)

    ck = add("check", help="verify every file against its record and the database against the files; finish or "
                           "undo interrupted writes; name stale derived data")
    ck.add_argument("--run", default=None, help="only this run's directories (default: the whole data directory)")
    ck.add_argument("--fast", action="store_true", help="sizes only, no checksums")
    _data_dir(ck)

    w = add("show", help="PNG picture of the board at a given event of a recorded game")
    w.add_argument("--run", required=True)
    w.add_argument("--game", type=int, default=0)
    w.add_argument("--seq", type=int, default=None, help="event number (default: the last)")
    w.add_argument("--out", type=Path, default=None, help="PNG path (default: reports/figures/board-RUN-G-SEQ.png)")
    _data_dir(w)

    g = add("recognize", help="posteriors over each player's mission (writes table posteriors)")
    g.add_argument("--run", required=True)
    g.add_argument("--recogniser", default="phatt",
                   help="recogniser spec: uniform, goal:temperature=0.1, phatt:scheme=simple:c=1:i=0.98, "
                        "phatt:scheme=proportional:lam=0.9, inverse:beta=10:focus=-1:eps=0.05, "
                        "mixture:beta=5:rho=0.5:temper=0.5 (play-style mixture), "
                        "mixture:beta=5:rho=0.05:temper=0.5:goals=3 (open-goal mixture), "
                        "classifier:train=RUN1,RUN2 (runs with other seeds)")
    g.add_argument("--hypotheses", default="cards6", choices=["cards6", "deck14"])
    g.add_argument("--rebuild-features", action="store_true")
    g.add_argument("--turns", action="store_true",
                   help="also store the posteriors after every turn (what the explorer draws); by default only at "
                        "the checkpoints the evaluation reads")
    _parallel(g)
    _data_dir(g)

    v = add("evaluate", help="recognition metrics with bootstrap CIs (writes recognition_metrics)")
    v.add_argument("--run", required=True)
    v.add_argument("--bootstrap", type=_positive, default=1000, help="bootstrap resamples")
    v.add_argument("--checkpoints", choices=["window", "game", "both"], default="window",
                   help="checkpoints as shares of each player's observation window, or of the game's turn ends "
                        "with setup turns (the reference's %% of game)")
    v.add_argument("--reading", choices=["card", "explanation"], default="card",
                   help="top-1 printed: card level (a card's probability sums its explanations) or the reference's "
                        "published reading (the most probable explanation's card, ties split); both are stored")
    _data_dir(v)

    x = add("experiment", help="run a named experiment end to end (recognition, generalisation or search)")
    x.add_argument("name", choices=["recognition", "generalisation", "search"])
    x.add_argument("--games", type=_positive, default=None,
                   help="recognition: games per run (train and test, each focus; default 1000); generalisation: "
                        "games per agent family (default 150, a fifth for the search agents); search: GB agent "
                        "games (default 200)")
    x.add_argument("--positions", type=_positive, default=200, help="search: positions per player count")
    x.add_argument("--lookahead", type=_positive, default=4,
                   help="search: look-ahead in turns of every search on every position")
    x.add_argument("--deep-positions", type=int, default=20,
                   help="search: positions (per player count) searched one turn deeper")
    x.add_argument("--no-cache", action="store_true",
                   help="search: run every search again, neither reading nor extending data/cache/search.parquet")
    x.add_argument("--foreign-games", type=_positive, default=None,
                   help="generalisation: import only the first N logs of each foreign family (default: all)")
    x.add_argument("--seed", type=int, default=EXPERIMENT_SEED)
    x.add_argument("--bootstrap", type=_positive, default=1000)
    _parallel(x)
    x.add_argument("--out-dir", type=Path, default=None, help="reports directory (default: reports/)")
    _data_dir(x)

    sw = add("sweep", help="run a papermill parameter sweep from a spec (resumable)")
    sw.add_argument("spec", type=Path, help="pipelines/NAME.yaml")
    sw.add_argument("--force", action="store_true", help="rerun finished points too")
    sw.add_argument("--check", action="store_true", help="validate the spec and list its points, run nothing")
    _parallel(sw)
    _data_dir(sw)

    t = add("tournament", help="seat-rotated matches: win rates (Wilson CI) and Bradley-Terry ratings")
    t.add_argument("--name", required=True)
    t.add_argument("--agents", required=True, help="comma-separated agent specs (round robin if more than seats)")
    t.add_argument("--players", type=_positive, default=2)
    t.add_argument("--games", type=_positive, default=100, help="games per lineup")
    t.add_argument("--mode", choices=["mission", "domination"], default="mission")
    t.add_argument("--turn-cap", type=_positive, default=300)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--belief-weights", default=None,
                   help="instead: aware:belief_weight=X against three --agents opponents, for each X")
    _parallel(t)
    _data_dir(t)

    rp = add("report", help="execute the analysis notebooks and build reports/report.html")
    rp.add_argument("--quick", action="store_true", help="a reduced run: the report says so on its first line")
    rp.add_argument("--quiet", action="store_true")
    _data_dir(rp)

    m = add("summary", help="summary figure and table of a run under reports/")
    m.add_argument("--run", default="default")
    m.add_argument("--out-dir", type=Path, default=None, help="reports directory (default: reports/)")
    _data_dir(m)

    b = add("bench", help="engine speed: games per second per core, time per action")
    b.add_argument("--games", type=_positive, default=200, help="games per engine case")
    b.add_argument("--search", action="store_true",
                   help="instead: generated states per second of the searches, compiled against plain numpy")
    b.add_argument("--search-table", action="store_true",
                   help="instead: time, work and peak memory of five-turn exhaustive searches under the default "
                        "transposition-table bound and a tight one")
    b.add_argument("--positions", type=_positive, default=None,
                   help="--search, --dask-scaling (default 6), --search-table (default 4): positions per player count")
    b.add_argument("--lookahead", type=_positive, default=None,
                   help="--search, --dask-scaling (default 3), --search-table (default 5): look-ahead in turns")
    b.add_argument("--out-dir", type=Path, default=None)
    b.add_argument("--recognition", metavar="RUN", default=None,
                   help="instead: time 100 PHATT weight settings on RUN's stored features (2 workers)")
    b.add_argument("--settings", type=_positive, default=100)
    b.add_argument("--explore", metavar="RUN", default=None,
                   help="instead: the game explorer's time to open RUN's longest game, to redraw per slider move "
                        "and to switch games")
    b.add_argument("--notebooks", nargs="*", default=None, metavar="NAME",
                   help="instead: every notebook (or those NAMEs) executed on the database, each in a fresh process, "
                        "with its kernel's peak memory and slowest cell (written to notebooks.md)")
    b.add_argument("--recognition-memory", type=_positive, nargs="?", const=500, default=None, metavar="GAMES",
                   help="instead: peak memory of every recogniser on one simulated run of GAMES (default 500) "
                        "six-player games (default agents)")
    b.add_argument("--memory", action="store_true",
                   help="instead: peak memory of simulate (1,000, 5,000 and 10,000 games) and of feature "
                        "building, and the DuckDB file's size when a run is written again")
    b.add_argument("--scale", type=_sizes, nargs="?", const="1000,10000,100000", default=None, metavar="SIZES",
                   help="instead: simulate and the README's query at growing numbers of games, whole process, "
                        "with disk and peak memory; on a local Dask cluster too")
    b.add_argument("--dask-sizes", type=_sizes, default="10000", metavar="SIZES",
                   help="with --scale: the sizes also simulated on a local Dask cluster (default 10,000)")
    b.add_argument("--recognition-scale", type=_sizes, nargs="?", const="10000,100000", default=None,
                   metavar="SIZES", help="instead: every recogniser over a run of each size (default 10,000 and "
                                         "100,000 games), whole process on --workers processes, with peak memory")
    b.add_argument("--recognisers", nargs="+", metavar="SPEC", default=None,
                   help="with --recognition-scale: only these recognisers (default: every one)")
    b.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="with --recognition-scale: measure locally and, beside it, simulate and recognise on this "
                        "Dask scheduler, with the workers' peak memory (written to recognition-scale-dask.md)")
    b.add_argument("--dask-only", action="store_true",
                   help="with --recognition-scale --dask: measure on the cluster alone (the report keeps the local "
                        "rows, and those of other sizes, from its earlier runs)")
    b.add_argument("--dask-scaling", action="store_true",
                   help="instead: the search experiment's tasks on a local Dask cluster of 1, 2 and 4 workers")
    b.add_argument("--versus", metavar="COMMAND", default=None,
                   help="instead: riskcore simulate against COMMAND, another program playing as many four-player "
                        "mission games of its own AI ({games} in COMMAND is replaced by their number), whole "
                        "process, alternating run by run (written to versus-NAME.md)")
    b.add_argument("--versus-name", default="Domination", metavar="NAME", help="with --versus: the program's name")
    b.add_argument("--versus-games", type=_positive, default=2000, metavar="GAMES",
                   help="with --versus: games each side plays per run")
    b.add_argument("--runs", type=_positive, default=5, help="with --versus: paired runs")
    b.add_argument("--workers", type=_positive, default=2)
    _data_dir(b)

    fz = add("fuzz", help="seeded games over random configurations, each checked by an independent rule checker")
    fz.add_argument("--games", type=_positive, default=10_000, help="games to play and check")
    fz.add_argument("--seed", type=int, default=0, help="seed of the configurations and games")
    fz.add_argument("--out-dir", type=Path, default=None, help="report folder (default: reports/benchmarks/)")
    _parallel(fz)

    ts = add("train-scorer", help="fit the learned strike's end-of-turn scorer (search) and store it")
    ts.add_argument("--players", type=int, choices=[2, 3], required=True)
    ts.add_argument("--seeds", type=_seed_list, default=(91, 92), help="training position seeds, e.g. 91,92")
    ts.add_argument("--validation-seed", type=int, default=93)
    ts.add_argument("--positions", type=_positive, default=200, help="positions per seed")
    ts.add_argument("--out", type=Path, default=None,
                    help="weights file (default: end_scorer.json in the models folder, models/ or $RISKCORE_MODELS)")
    _parallel(ts)

    tr = add("train-recogniser", help="simulate the training population, name riskcore's recogniser on it "
             "(leave-one-lineage-out) and fit the learned recogniser's models into models/")
    tr.add_argument("--games", type=_positive, default=100_000, help="games of the training population")
    tr.add_argument("--seed", type=int, default=None, help="the population's seed (default: the declared one)")
    tr.add_argument("--reuse", action="store_true", help="the population's runs are in the data directory already: "
                    "do not simulate them again")
    tr.add_argument("--bootstrap", type=_positive, default=2000,
                    help="resamples of the naming interval and of the learning curve's")
    tr.add_argument("--out", type=Path, default=None,
                    help="folder of the models (default: the models folder, models/ or $RISKCORE_MODELS)")
    _data_dir(tr)
    _parallel(tr)
    return p


class _NoPandas:
    """A module finder that says pandas is not installed."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas":
            raise ImportError("pandas is not needed here")
        return None


def _arrow_without_pandas() -> None:
    """pyarrow imports pandas (a fifth of a second) at its first `pa.array` call only to ask whether the input is a
    pandas object, and a simulate process never hands it one: that first question finds no pandas. pyarrow still
    imports pandas when something later converts to or from it."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    sys.meta_path.insert(0, _NoPandas)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(_NoPandas)


def cmd_simulate(a) -> None:
    _arrow_without_pandas()
    from riskcore.engine.config import GameConfig
    from riskcore.simulate import RunSpec, default_chunk, simulate

    config = GameConfig(board=a.board, n_players=a.players, mode=a.mode, deal=a.deal, setup_batch=a.setup_batch,
                        card_values=a.card_values, card_cap=a.card_cap, fortify=a.fortify, turn_cap=a.turn_cap)
    agents = tuple(x.strip() for x in a.agents.split(",") if x.strip())
    spec = RunSpec(run=a.run, games=a.games, config=config, agents=agents, seed=a.seed,
                   chunk=a.chunk or default_chunk(a.games))
    counts = simulate(spec, a.data_dir, a.workers, a.dask, progress=not a.quiet)
    print(f"run {a.run!r}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def cmd_replay(a) -> None:
    from riskcore.replay import RunTraces, verify_game

    traces = RunTraces(a.run, a.data_dir)
    if a.show_events:
        events, *_ = traces.game(a.game or 0)
        print(events.drop(columns=["run", "engine_version"]).to_string(index=False))
        return
    games = [a.game] if a.game is not None else traces.game_ids()
    if not games:
        raise ValueError(f"run {a.run!r} has no games")
    total = sum(verify_game(traces, int(g)) for g in games)
    print(f"replayed {len(games)} game(s) of run {a.run!r} from its Parquet traces: {total} events, every turn "
          "snapshot and every games and players row match")


def cmd_import(a) -> None:
    from riskcore.domination import import_logs

    counts, summary = import_logs(a.logs, a.run, a.data_dir, a.missions, a.drop_empty_battles, a.borders,
                                  a.skip_invalid)
    ignored = ", ".join(f"{k}: {v}" for k, v in sorted(summary.ignored.items())) or "none"
    runs = ", ".join(f"{name!r} ({n} game(s))" for name, n in summary.runs.items())
    print(f"run(s) {runs} on the {a.borders}-border map: {summary.games} game(s) from {len(a.logs)} log(s); "
          f"battles retreated before any roll: {summary.empty_battles} "
          f"({'dropped' if a.drop_empty_battles else 'kept'}); ignored commands: {ignored}; "
          f"mission games dealt from the program's full mission list: {summary.full_list}; "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if summary.skipped:
        print(f"skipped {len(summary.skipped)} game(s) that do not replay:")
        for reason in summary.skipped:
            print(f"  {reason}")
    if summary.duplicates:
        print(f"{len(summary.duplicates)} game(s) given more than once, imported once:")
        for where in summary.duplicates:
            print(f"  {where}")


def cmd_db(a) -> None:
    import warnings

    from riskcore import db

    if a.register:
        from riskcore.simulate import register_pending

        counts = register_pending(a.register, a.data_dir)
        print(f"run {a.register!r} registered: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        return
    if a.rebuild:
        runs = db.rebuild(a.data_dir)
        print(f"rebuilt the database from {len(runs)} run(s): {', '.join(runs)}")
    if a.sql:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", db.StaleWarning)
            result = db.read_only_query(a.sql, a.data_dir)
        for w in caught:  # a stale derivation is flagged beside the rows, never shown as current
            if issubclass(w.category, db.StaleWarning):
                print(f"riskcore db: warning: {w.message}", file=sys.stderr)
        print(result.to_string(index=False))
        return
    print(db.schema_text(a.data_dir))


def cmd_check(a) -> None:
    from riskcore.db import DataError
    from riskcore.integrity import check, summary

    report = check(a.data_dir, a.run, checksums=not a.fast)
    print(summary(report))
    if report.problems:
        raise DataError(f"{len(report.problems)} problem(s) found (listed above)")


def cmd_show(a) -> None:
    from riskcore import paths
    from riskcore.db import query
    from riskcore.render import player_labels, save_board_png
    from riskcore.replay import load_game, replay

    events, missions, config, _ = load_game(a.run, a.game, a.data_dir)
    last = int(events.seq.max())
    seq = last if a.seq is None else a.seq
    if not 0 <= seq <= last:
        raise ValueError(f"--seq {seq} out of range: game {a.game} of run {a.run!r} has events 0..{last}")
    state = replay(events, missions, config, until_seq=seq, label=f"run {a.run!r} game {a.game}")
    seats = query("SELECT agent FROM players WHERE run = ? AND game_id = ? ORDER BY player", [a.run, a.game],
                  a.data_dir)
    out = a.out or paths.figures_dir() / f"board-{a.run}-{a.game}-{seq}.png"
    save_board_png(state.board, state.owner, state.armies, out,
                   title=f"{a.run} game {a.game}, event {seq}, turn {state.turn}",
                   players=player_labels(state.board, list(seats.agent)))
    print(out)


def cmd_recognize(a) -> None:
    from riskcore.recognition.pipeline import mean_metrics, recognize
    from riskcore.recognition.recognisers import Recogniser

    rec = Recogniser.from_spec(a.recogniser)
    counts = recognize(a.run, rec, a.hypotheses, a.data_dir, a.rebuild_features, a.workers, a.dask,
                       progress=not a.quiet, turns=a.turns)
    print(f"run {a.run!r}, {rec.setting}: {counts.get('posteriors', 0)} posterior rows")
    table = mean_metrics(a.run, rec.setting, a.data_dir)
    print("card level, mean over players, by share of the observation window (no CIs: see `riskcore evaluate`):")
    print(table.rename_axis("observed").T.to_string(float_format=lambda v: f"{v:.3f}"))


def cmd_evaluate(a) -> None:
    from riskcore.recognition.metrics import READINGS
    from riskcore.recognition.pipeline import evaluate, top1_table

    clocks = ("window", "game") if a.checkpoints == "both" else (a.checkpoints,)
    metrics = evaluate(a.run, a.data_dir, n_boot=a.bootstrap, clocks=clocks)
    reading = ("card level" if a.reading == "card" else
               "the reference's reading (the most probable explanation's card, ties split)")
    for clock in clocks:
        what = "the observation window" if clock == "window" else "the game's turn ends, setup turns included"
        print(f"top-1 accuracy, {reading}, by share of {what} (95% bootstrap CI), run {a.run!r}:")
        print(top1_table(metrics[metrics.clock == clock], READINGS[a.reading]).to_string())


def cmd_experiment(a) -> None:
    if a.name == "search":
        from riskcore.experiments.search import run_search_experiment

        if a.deep_positions < 0:
            raise ValueError(f"--deep-positions must be 0 or more, got {a.deep_positions}")
        tables = run_search_experiment(a.positions, a.lookahead, a.deep_positions, agent_games=a.games or 200,
                                       seed=a.seed,
                                       data_dir=a.data_dir, workers=a.workers, dask=a.dask, progress=not a.quiet,
                                       use_cache=not a.no_cache)
        print(tables["search_accuracy"].to_string(index=False))
        print(tables["search_agent"].to_string(index=False))
        return
    if a.name == "generalisation":
        from riskcore.experiments.recognition.generalisation import FOREIGN, foreign_logs
        from riskcore.experiments.recognition.generalisation import run_experiment as run_generalisation

        logs = ({f.name: foreign_logs(f, a.data_dir, a.foreign_games)[:a.foreign_games] for f in FOREIGN}
                if a.foreign_games else None)
        print(run_generalisation(a.games or 150, a.seed + 5000, a.data_dir, a.workers, a.dask, not a.quiet,
                                 a.bootstrap, a.out_dir, logs=logs))
        return
    from riskcore.experiments.recognition.focus import run_experiment

    path = run_experiment(a.games or 1000, a.seed, a.data_dir, a.workers, a.dask, not a.quiet, a.bootstrap,
                          a.out_dir)
    print(path)


def cmd_sweep(a) -> None:
    from riskcore.experiments.sweep import load_spec, run_sweep

    spec = load_spec(a.spec)
    if a.check:
        print(f"sweep {spec.name!r}: {len(spec.points)} point(s) of {spec.notebook.name}, spec is valid")
        return
    points = run_sweep(spec, a.data_dir, a.workers, a.dask, a.force, progress=not a.quiet)
    counts = points.status.value_counts().to_dict()
    print(f"sweep {spec.name!r}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + f"; executed notebooks in reports/runs/{spec.name}/")
    failed = points[points.status != "ok"]
    for row in failed.itertuples():
        print(f"  failed {row.point} {row.params}: {row.error.splitlines()[0] if row.error else ''}")
    if len(failed):
        raise RuntimeError(f"{len(failed)} point(s) of sweep {spec.name!r} failed (see above); rerun to retry them")


def cmd_tournament(a) -> None:
    from riskcore.experiments.tournament import belief_sweep, run_tournament

    agents = [x.strip() for x in a.agents.split(",") if x.strip()]
    if a.belief_weights:
        if len(agents) != 1:
            raise ValueError("with --belief-weights give one opponent spec in --agents")
        weights = [float(x) for x in a.belief_weights.split(",")]
        df = belief_sweep(a.name, weights, a.games, agents[0], a.seed, a.data_dir, a.workers, a.dask,
                          not a.quiet)
    else:
        df = run_tournament(a.name, agents, a.players, a.games, a.seed, a.mode, a.turn_cap, a.data_dir, a.workers,
                            a.dask, not a.quiet)
    print(df.drop(columns=["tournament"]).to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def cmd_report(a) -> None:
    from riskcore import paths
    from riskcore.experiments.report import build_report

    # the README's results are the committed report's: copied only by a full run into the repository's reports
    readme = not a.quick and paths.reports_dir().resolve() == (paths.project_root() / "reports").resolve()
    print(build_report(a.data_dir, {"report": {"quick": True}} if a.quick else None, progress=not a.quiet,
                       readme=readme))


def cmd_summary(a) -> None:
    from riskcore.experiments.summary import write_summary

    print(write_summary(a.run, a.data_dir, a.out_dir))


def cmd_bench(a) -> None:
    from riskcore.experiments.bench import bench_explore, bench_recognition, bench_search, run_bench

    if a.versus is not None:
        from riskcore.experiments.bench_versus import bench_versus

        print(bench_versus(a.versus, a.versus_games, a.runs, a.versus_name, out_dir=a.out_dir).to_string(index=False))
        return
    if a.scale:
        from riskcore.experiments.bench_scale import bench_scale

        print(bench_scale(a.scale, a.dask_sizes, out_dir=a.out_dir).to_string(index=False))
        return
    if a.recognition_scale:
        from riskcore.experiments.bench_recognition_scale import bench_recognition_scale

        kw = {"recognisers": tuple(a.recognisers)} if a.recognisers else {}
        if a.dask_only and not a.dask:
            raise ValueError("--dask-only needs --dask ADDRESS")
        print(bench_recognition_scale(a.recognition_scale, workers=a.workers, out_dir=a.out_dir, dask_address=a.dask,
                                      dask_only=a.dask_only, **kw).to_string(index=False))
        return
    if a.dask_scaling:
        from riskcore.experiments.bench_scaling import bench_dask_scaling

        print(bench_dask_scaling(a.positions or 6, a.lookahead or 3, out_dir=a.out_dir).to_string(index=False))
        return
    if a.search_table:
        from riskcore.experiments.bench_memory import bench_search_table

        print(bench_search_table(a.positions or 4, a.lookahead or 5, out_dir=a.out_dir).to_string(index=False))
        return
    if a.memory:
        from riskcore.experiments.bench_memory import bench_memory

        print(bench_memory(out_dir=a.out_dir).to_string(index=False))
        return
    if a.recognition_memory:
        from riskcore.experiments.bench_memory import bench_recognition_memory

        print(bench_recognition_memory(a.recognition_memory, out_dir=a.out_dir).to_string(index=False))
        return
    if a.notebooks is not None:
        from riskcore.experiments.bench_notebooks import BENCHED, bench_notebooks

        print(bench_notebooks(tuple(a.notebooks) or BENCHED, a.data_dir, a.out_dir).to_string(index=False))
        return
    if a.explore:
        print(bench_explore(a.explore, data_dir=a.data_dir, out_dir=a.out_dir).to_string(index=False))
        return
    if a.search:
        print(bench_search(a.positions or 6, a.lookahead or 3, out_dir=a.out_dir).to_string(index=False))
        return
    if a.recognition:
        print(bench_recognition(a.recognition, a.settings, a.workers, a.data_dir, a.out_dir).to_string(index=False))
        return
    print(run_bench(a.games, a.out_dir).to_string(index=False))


def cmd_fuzz(a) -> None:
    from riskcore.experiments.fuzz import run_fuzz

    df = run_fuzz(a.games, a.seed, a.workers, a.dask, not a.quiet, a.out_dir)
    bad = df[df.violation != ""]
    print(f"{len(df)} games, {int(df.events.sum())} events checked, {len(bad)} violation(s)")
    if len(bad):
        raise RuntimeError(f"{len(bad)} game(s) broke a rule, e.g. seed {bad.seed.iloc[0]}: {bad.violation.iloc[0]}")


def cmd_train_scorer(a) -> None:
    from riskcore.experiments.scorer import refit

    out, record = refit(a.players, a.seeds, a.validation_seed, a.positions, a.out, a.workers, a.dask,
                        progress=not a.quiet)
    for k, checks in record["agreement"].items():
        print(f"{a.players} players, k={k}: picks an end exact search picks, " +
              ", ".join(f"{name} {v:.1%}" for name, v in checks.items()))
    print(out)


def cmd_train_recogniser(a) -> None:
    from riskcore.experiments.recognition.population import SEED
    from riskcore.experiments.recognition.training import train

    protocol = train(a.games, a.data_dir, a.workers, a.dask, progress=not a.quiet, out=a.out,
                     seed=SEED if a.seed is None else a.seed, n_boot=a.bootstrap, simulate=not a.reuse)
    for row in protocol["choice"]:
        print(f"{row['candidate']}: held-out log loss {row['log_loss']:.3f} on {row['folds']}"
              + ("  (named)" if row["named"] else f", named minus this {row['named_minus_this']:+.3f} "
                 f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"))
    print(f"riskcore's recogniser: {protocol['spec']}")


COMMANDS = {"simulate": cmd_simulate, "import": cmd_import, "replay": cmd_replay, "db": cmd_db, "check": cmd_check,
            "show": cmd_show, "summary": cmd_summary,
            "recognize": cmd_recognize, "evaluate": cmd_evaluate, "experiment": cmd_experiment,
            "sweep": cmd_sweep, "report": cmd_report,
            "tournament": cmd_tournament,
            "bench": cmd_bench, "fuzz": cmd_fuzz, "train-scorer": cmd_train_scorer,
            "train-recogniser": cmd_train_recogniser}


_SIGNALLED: list[int] = []  # the signal that stopped the command (a library may turn the interrupt into an error)


def _terminated(signum, frame) -> None:
    _SIGNALLED.append(signum)
    raise KeyboardInterrupt(f"stopped by signal {signum}")


def _writes(args) -> bool:
    """Whether the command writes to the data directory (reading commands work on a read-only one)."""
    if args.command in ("replay", "show", "summary", "check"):  # check writes only to finish interrupted writes
        return False
    if args.command == "db":
        return bool(args.rebuild or args.register)
    return True


def _duckdb_error() -> type:
    """DuckDB's error class, imported only when an error is being handled (a simulate never loads DuckDB's reading
    side early)."""
    import duckdb

    return duckdb.Error


def _check_data_dir(path: Path | None, write: bool) -> None:
    """A --data-dir must be a directory; one a command writes to must be writable (made when missing)."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise ValueError(f"--data-dir {path} is a file, not a directory")
    if not write:
        if not path.is_dir():
            raise ValueError(f"--data-dir {path} does not exist")
        return
    probe = path if path.exists() else next((p for p in path.parents if p.exists()), Path("/"))
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"--data-dir {path} is not writable")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # SIGTERM (timeout, CI, schedulers) cleans up as Ctrl-C does: staging removed, workers stopped
    previous = signal.signal(signal.SIGTERM, _terminated)
    _SIGNALLED.clear()
    try:
        _check_data_dir(getattr(args, "data_dir", None), _writes(args))
        COMMANDS[args.command](args)
    except (ValueError, RuntimeError, KeyError, FileNotFoundError, OSError, OverflowError, _duckdb_error()) as exc:
        if _SIGNALLED:  # a query the signal interrupted says so in its own words: still a stop, not an error
            print(f"riskcore {args.command}: stopped by signal {_SIGNALLED[0]}; nothing half-written was kept",
                  file=sys.stderr)
            return 130
        message = " ".join(str(exc).split())  # one line, whatever the library wrote
        if isinstance(exc, _duckdb_error()):  # a database error no layer named: a damaged file, most likely
            message += " (if the database is damaged, `riskcore db --rebuild` rebuilds it from the Parquet files)"
        print(f"riskcore {args.command}: error: {message[:2000]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        from riskcore.publish import Interrupted

        said = str(exc) if isinstance(exc, Interrupted) else "stopped; nothing half-written was kept"
        if args.command == "simulate" and not isinstance(exc, Interrupted):
            said += "; the chunks of games it finished are kept, and the same command plays the rest"
        print(f"riskcore {args.command}: {said}", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def run() -> None:
    """The `riskcore` command. After Ctrl-C, SIGTERM or an error (clean-up done), the process ends at once: the
    process pool's manager thread may wait forever on a result a terminated or failed worker was writing, and the
    interpreter's exit would join it."""
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 PID`: every thread's stack on stderr, for a command that seems stuck
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    code = main()
    if code != 0:  # a stop or an error: no joining of worker threads that may wait forever (a full disk, a kill)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
