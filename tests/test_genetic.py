import numpy as np
import pytest

from riskcore.tuning.genetic import (GAConfig, best_gene, crossover, initial_population, mutate, replace_weakest,
                                     run_ga)

TINY = GAConfig(population=8, generations=2, tournaments=2, tournament_size=4, games_per_pair=2, top_k=2,
                children=2, mutants=1, turn_cap=60, depth=1, width=3, seed=3)


def test_crossover_averages_two_parents():
    parents = np.array([[0.0, 2, 4, 6], [2.0, 2, 0, 0], [10.0, 10, 10, 10]])
    kids = crossover(parents, 50, np.random.default_rng(0))
    pair_means = {tuple((parents[i] + parents[j]) / 2) for i in range(3) for j in range(3) if i != j}
    assert all(tuple(k) in pair_means for k in kids)


def test_mutation_redraws_exactly_one_weight():
    parents = np.full((5, 4), 5.0)
    out = mutate(parents, 40, np.random.default_rng(1), high=10)
    changed = (out != 5.0).sum(axis=1)
    assert (changed == 1).all() and ((out >= 0) & (out <= 10)).all()


def test_replacement_keeps_the_population_size_and_drops_the_weakest():
    pop = np.arange(20, dtype=float).reshape(5, 4)
    fitness = np.array([0.9, 0.1, 0.5, 0.0, 0.7])
    new, fresh = replace_weakest(pop, fitness, np.full((2, 4), -1.0))
    assert new.shape == pop.shape
    assert fresh.tolist() == [False, True, False, True, False]
    assert (new[[1, 3]] == -1).all() and (new[[0, 2, 4]] == pop[[0, 2, 4]]).all()


def test_initial_weights_are_in_range():
    pop = initial_population(GAConfig(), np.random.default_rng(0))
    assert pop.shape == (100, 4) and pop.min() >= 0 and pop.max() <= 10


def test_reference_sizes_are_the_defaults():
    cfg = GAConfig()
    assert (cfg.population, cfg.generations, cfg.tournaments, cfg.tournament_size, cfg.top_k, cfg.children,
            cfg.mutants) == (100, 4, 10, 10, 3, 12, 3)


def test_bad_sizes_rejected():
    with pytest.raises(ValueError, match="exceed the population"):
        GAConfig(population=10, tournaments=2, tournament_size=10)


def test_ga_is_deterministic_and_resumes(tmp_path):
    a = run_ga(TINY, tmp_path / "a", workers=1, progress=False)
    b = run_ga(TINY, tmp_path / "b", workers=2, progress=False)
    assert a.equals(b)
    (tmp_path / "a" / "generation-001.parquet").unlink()  # as if interrupted during generation 1
    (tmp_path / "a" / "generation-002.parquet").unlink()
    c = run_ga(TINY, tmp_path / "a", workers=1, progress=False)
    assert a.equals(c)
    assert len(best_gene(a)) == 4
    assert set(a.generation) == {0, 1, 2} and (a.groupby("generation").size() == 8).all()


def test_checkpoint_of_another_configuration_is_refused(tmp_path):
    run_ga(TINY, tmp_path, workers=1, progress=False)
    with pytest.raises(ValueError, match="another GA configuration"):
        run_ga(GAConfig(**{**TINY.__dict__, "seed": 4}), tmp_path, workers=1, progress=False)


def test_the_yardstick_scores_each_generations_fittest_gene_and_ends_on_the_validation(tmp_path):
    from riskcore.experiments.genetic import tune_and_validate

    history, validation, yardstick = tune_and_validate(TINY, 6, data_dir=tmp_path, workers=1, yardstick_games=4)
    assert yardstick.generation.tolist() == [0, 1]
    first = history[history.generation == 0].sort_values("fitness", ascending=False, kind="stable").iloc[0]
    assert yardstick.iloc[0][["w1", "w2", "w3", "w4"]].tolist() == first[["w1", "w2", "w3", "w4"]].tolist()
    last, v = yardstick.iloc[-1], validation.iloc[0]
    assert (last.games, last.wins, last.draws) == (v.games, v.wins, v.draws) == (6, v.wins, v.draws)
    assert yardstick.iloc[0].games == 4
    decided = last.games - last.draws
    assert decided == 0 or last.decided_share == last.wins / decided
