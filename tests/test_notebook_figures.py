"""Report figures are reproducible: every seaborn call that bootstraps a confidence interval is seeded."""

import ast
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.py"))
BOOTSTRAPPING = {"relplot", "lineplot", "barplot", "catplot", "pointplot"}


def _unseeded_calls(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in BOOTSTRAPPING:
            kw = {k.arg: k.value for k in node.keywords}
            errorbar = kw.get("errorbar")
            no_bootstrap = errorbar is not None and not (
                isinstance(errorbar, ast.Tuple) and ast.literal_eval(errorbar.elts[0]) == "ci")
            if "seed" not in kw and not no_bootstrap:
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_bootstrapped_interval_is_seeded(notebook):
    assert _unseeded_calls(notebook.read_text()) == [], f"{notebook.name}: seed these seaborn calls"


def test_the_check_finds_an_unseeded_call():
    assert _unseeded_calls("sns.lineplot(d, x='a', y='b')\nsns.lineplot(d, errorbar='sd')\n") == [1]
