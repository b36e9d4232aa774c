import hashlib

from riskcore.engine.config import GameConfig
from riskcore.game import play_game
from riskcore.simulate import RunSpec, simulate


def _digests(data_dir, run):
    root = data_dir / "traces" / f"run={run}"
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.parquet"))}


def test_same_seed_and_config_give_byte_identical_parquet_whatever_the_workers(tmp_path):
    spec = RunSpec("det", 12, GameConfig(), ("mission", "random"), 5, chunk=4)
    simulate(spec, tmp_path / "a", workers=1, progress=False)
    simulate(spec, tmp_path / "b", workers=2, progress=False)
    a, b = _digests(tmp_path / "a", "det"), _digests(tmp_path / "b", "det")
    assert len(a) == 3 * 4 + 2 and a == b  # 3 chunks x 4 tables + runs + the record of the files


def test_another_seed_gives_other_games(tmp_path):
    simulate(RunSpec("det", 4, GameConfig(), ("mission",), 5), tmp_path / "a", workers=1, progress=False)
    simulate(RunSpec("det", 4, GameConfig(), ("mission",), 6), tmp_path / "b", workers=1, progress=False)
    a, b = _digests(tmp_path / "a", "det"), _digests(tmp_path / "b", "det")
    assert a["events/part-00000.parquet"] != b["events/part-00000.parquet"]


def test_changing_an_agent_does_not_change_the_deal_or_missions():
    config = GameConfig()
    one = play_game(config, ["mission"] * 4, 99)
    two = play_game(config, ["random", "mission", "domination", "mission:focus=1"], 99)
    deal = [r for r in one.state.log if r[4] == "deal"]
    assert deal == [r for r in two.state.log if r[4] == "deal"]
    assert one.missions == two.missions


def test_play_game_is_deterministic():
    config = GameConfig(n_players=3)
    one = play_game(config, ["mission", "random", "domination"], 3)
    two = play_game(config, ["mission", "random", "domination"], 3)
    assert one.state.log == two.state.log


def test_a_small_run_played_in_python_writes_the_bytes_the_kernel_writes(tmp_path, monkeypatch):
    # a run of at most PYTHON_LOOP_GAMES games skips the kernel's start-up; its files must not show which loop ran
    import riskcore.simulate as sim

    spec = RunSpec("det", 6, GameConfig(), ("mission", "domination"), 8, chunk=3)
    simulate(spec, tmp_path / "python", workers=1, progress=False)
    monkeypatch.setattr(sim, "PYTHON_LOOP_GAMES", 0)
    simulate(spec, tmp_path / "kernel", workers=1, progress=False)
    assert _digests(tmp_path / "python", "det") == _digests(tmp_path / "kernel", "det")


def test_only_a_small_run_leaves_the_kernel_out(monkeypatch):
    import riskcore.simulate as sim

    used = []
    monkeypatch.setattr(sim, "play_game", lambda *a, compiled, **k: used.append(compiled) or play_game(*a, **k))
    sim.simulate_chunk(RunSpec("det", sim.PYTHON_LOOP_GAMES, GameConfig(), ("mission",), 1), [0], [3])
    sim.simulate_chunk(RunSpec("det", sim.PYTHON_LOOP_GAMES + 1, GameConfig(), ("mission",), 1), [0], [3])
    assert used == [False, True]


def test_a_large_run_gets_larger_parts_by_default_and_a_small_one_keeps_25(tmp_path, monkeypatch):
    import riskcore.simulate as sim
    from riskcore.cli import main

    assert [sim.default_chunk(n) for n in (1, 2_500, 2_600, 10_000, 10**5, 10**6)] == [25, 25, 26, 100, 1000, 1000]
    chunks = []
    monkeypatch.setattr(sim, "simulate", lambda spec, *a, **k: chunks.append(spec.chunk) or {})
    for games in ("10000", "10000 --chunk 7"):
        assert main(["simulate", "--run", "r", "--games", *games.split(), "--data-dir", str(tmp_path)]) == 0
    assert chunks == [100, 7]
