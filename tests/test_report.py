"""The whole research path on tiny data: experiment, both shipped sweeps (fewer points), every notebook, HTML."""

from pathlib import Path

import pytest
import yaml

from riskcore.engine.config import GameConfig
from riskcore.experiments.recognition.generalisation import FAMILIES, FOREIGN, foreign_logs
from riskcore.experiments.recognition.generalisation import run_experiment as run_generalisation
from riskcore.experiments.recognition.focus import run_experiment
from riskcore import paths
from riskcore.experiments import search_cache
from riskcore.experiments.search import CACHE_NAME, SEARCHES, run_search_experiment
from riskcore.experiments.report import FIGURES, NOTEBOOKS, build_report
from riskcore.simulate import RunSpec, simulate
from riskcore.experiments.sweep import load_spec, run_sweep
from riskcore.experiments.tournament import belief_sweep, run_tournament

ROOT = Path(__file__).parents[1]


def _small_spec(tmp_path: Path, name: str, keep: int) -> Path:
    spec = yaml.safe_load((ROOT / "pipelines" / f"{name}.yaml").read_text())
    spec["notebook"] = str(ROOT / spec["notebook"])
    if "points" in spec:
        spec["points"] = spec["points"][:keep]
    if "grid" in spec:
        spec["grid"] = {k: v[:keep] if k != "focus" else v for k, v in spec["grid"].items()}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    data, reports = root / "data", root / "reports"
    mp = pytest.MonkeyPatch()
    mp.setenv("RISKCORE_REPORTS", str(reports))
    simulate(RunSpec("default", 10, GameConfig(), ("mission:focus=0.8", "mission:focus=0"), 1), data, workers=2,
             progress=False)
    run_generalisation(games=4, seed=6, data_dir=data, workers=2, progress=False, n_boot=50,
                       families=tuple(f for f in FAMILIES if f.name in ("mission", "bsr", "domination-blind")),
                       logs={f.name: foreign_logs(f, data, 2)[:2] for f in FOREIGN})
    run_experiment(games=12, seed=5, data_dir=data, workers=2, progress=False, n_boot=100)  # riskcore's: named
    for name, keep in (("phatt_weights", 2), ("recognisers", 4)):
        points = run_sweep(load_spec(_small_spec(root, name, keep)), data, workers=2, progress=False)
        assert (points.status == "ok").all(), points[points.status != "ok"].error.tolist()
    run_tournament("round-robin", ["random", "mission", "minimax:depth=1", "mcs:playouts=2"], 2, 2, data_dir=data,
                   workers=2, progress=False)
    belief_sweep("aware", [0.0, 2.0], 4, data_dir=data, workers=2, progress=False)
    ga = yaml.safe_load((ROOT / "pipelines" / "genetic_tuning.yaml").read_text())
    ga["notebook"] = str(ROOT / ga["notebook"])
    ga["fixed"] = {"population": 6, "generations": 1, "tournaments": 2, "tournament_size": 3, "games_per_pair": 1,
                   "top_k": 2, "children": 1, "mutants": 1, "validation_games": 4, "turn_cap": 40, "depth": 1}
    (root / "ga.yaml").write_text(yaml.safe_dump(ga))
    assert yaml.safe_load((ROOT / "pipelines" / "genetic_tuning_quick.yaml").read_text())["name"] == ga["name"]
    points = run_sweep(load_spec(root / "ga.yaml"), data, workers=1, progress=False)
    assert (points.status == "ok").all(), points.error.tolist()
    run_search_experiment(n_positions=4, lookahead=1, deep_positions=1, agent_games=4, data_dir=data, workers=2,
                          progress=False)
    html = build_report(data, {"05-agents": {"mcrl_episodes": 500}}, progress=False)
    yield data, reports, html
    mp.undo()


def test_every_notebook_executes_and_is_kept(pipeline):
    _, reports, _ = pipeline
    for name in NOTEBOOKS:
        assert (reports / "notebooks" / f"{name}.ipynb").exists(), name


def test_every_report_figure_is_written(pipeline):
    _, reports, _ = pipeline
    for name in FIGURES:
        png = reports / "figures" / f"{name}.png"
        assert png.exists() and png.read_bytes()[:4] == b"\x89PNG", name


def test_report_html_names_and_embeds_every_figure_without_code(pipeline):
    import re

    _, _, html = pipeline
    text = html.read_text()
    for name in FIGURES:
        assert f'id="fig-{name}"' in text and f"<b>Figure {name}.</b>" in text, name
    assert text.count("data:image/png;base64") >= len(FIGURES)
    assert not re.search(r"from riskcore\.\w+ import", text)  # code cells are hidden
    assert "<title>Plan recognition and game AI in RISK</title>" in text
    assert str(html.parents[1]) not in text and "PosixPath(" not in text  # nothing of where it was built


def test_every_report_figure_has_alt_text_and_every_section_its_prose(pipeline):
    import re

    _, _, html = pipeline
    text = html.read_text()
    images = re.findall(r"<img [^>]*>", text)
    assert images and all(re.search(r'alt="[^"]{10,}"', img) for img in images)
    for part in ("Question.", "What was done.", "What the figures show.", "What it means."):
        assert text.count(f"<strong>{part}</strong>") >= 4, part  # dataset, recognition, agents, search
    assert ">Limits<" in text and "nan" not in re.sub(r"<[^>]+>", " ", text).split()


def test_the_search_experiment_keeps_every_search_in_its_cache(pipeline):
    data, _, _ = pipeline
    entries = search_cache.load(paths.cache_dir(data) / CACHE_NAME)
    # 4 positions per player count, every search at 1 turn, and at 2 on the deep position
    assert len(entries) == 2 * (1 + len(SEARCHES)) * (4 * 1 + 1)


def test_recognition_markdown_reports_targets(pipeline):
    _, reports, _ = pipeline
    text = (reports / "recognition.md").read_text()
    assert "## riskcore's recogniser at the default focus" in text and "Ablation" in text


def test_report_html_is_byte_identical_for_the_same_notebook_despite_random_cell_ids(tmp_path, monkeypatch):
    import nbformat

    from riskcore.experiments.report import build_html

    monkeypatch.setenv("RISKCORE_REPORTS", str(tmp_path / "reports"))
    pages = []
    for attempt in range(2):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"),
                                             nbformat.v4.new_code_cell("x = 1")])
        path = tmp_path / f"nb{attempt}.ipynb"
        nbformat.write(nb, path)
        pages.append(build_html(path).read_bytes())
    assert nb.cells[0]["id"] != nbformat.read(tmp_path / "nb0.ipynb", as_version=4).cells[0]["id"]
    assert pages[0] == pages[1]


def test_the_report_writes_the_readmes_headlines(pipeline):
    from riskcore.experiments.report import HEADLINES, README_MARKERS, readme_with_headlines

    _, reports, _ = pipeline
    headlines = (reports / HEADLINES).read_text()
    assert "riskcore's recogniser" in headlines and "| fork-ai w100 (" in headlines
    merged = readme_with_headlines(f"# x\n\n{README_MARKERS[0]}\nold\n{README_MARKERS[1]}\n\nafter\n", headlines)
    assert headlines.strip() in merged and "old" not in merged and merged.endswith("\n\nafter\n")


def test_the_committed_readme_carries_the_committed_reports_headlines():
    from riskcore.experiments.report import HEADLINES, readme_with_headlines

    readme = (ROOT / "README.md").read_text()
    assert readme == readme_with_headlines(readme, (ROOT / "reports" / HEADLINES).read_text())


def _numbers(text: str) -> list[str]:
    import re

    return re.findall(r"(?<![\d.\w])[+-]?\d+\.\d+%?", text)


def test_every_number_of_the_committed_headlines_is_one_of_the_committed_tables():
    """The README's results are the tables' numbers, rounded: a headline number no table holds was typed by hand
    or computed from something the report does not show."""
    from riskcore.experiments.report import HEADLINES

    reports = ROOT / "reports"
    held = [float(n.rstrip("%")) / (100 if n.endswith("%") else 1)
            for p in [*(reports / "tables").glob("*.md"), reports / "generalisation.md"]
            for n in _numbers(p.read_text())]

    def shown(number: str) -> bool:
        decimals = len(number.rstrip("%").split(".")[1]) + (2 if number.endswith("%") else 0)
        value = float(number.rstrip("%")) / (100 if number.endswith("%") else 1)
        return any(round(abs(h), decimals) == round(abs(value), decimals) for h in held)

    numbers = _numbers((reports / HEADLINES).read_text())
    assert len(numbers) > 20
    assert [n for n in numbers if not shown(n)] == []


def test_the_report_loads_nothing_from_the_network(pipeline):
    import re

    _, _, html = pipeline
    text = Path(html).read_text()
    assert not re.findall(r"<(?:script|link)[^>]+(?:src|href)=\"https?://", text)
    assert "mathjax" not in text.lower() and "require.min.js" not in text


def test_the_whole_pipeline_leaves_a_data_directory_that_checks_clean(pipeline):
    from riskcore.integrity import check

    data, _, _ = pipeline
    report = check(data)
    assert report.checked > 10 and not report.problems, report.problems
