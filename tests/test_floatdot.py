"""Float products that decide a search's moves give the same bits whichever BLAS kernel the CPU selects."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from riskcore.floatdot import dot

# Leaf values of the minimax agent's search, the end scorer's scores (both player counts), a short fit of the
# scorer and the aware agent's belief-times-membership product, on random inputs; printed as one digest.
DECISIONS = """
import hashlib, numpy as np
from riskcore.engine.board import load_board
from riskcore.floatdot import dot
from riskcore.search.endscore import load_scorer
from riskcore.search.endtrain import fit
from riskcore.agents.minimax_search import Search, SearchNode
rng = np.random.default_rng(7)
board = load_board("classic")
h = hashlib.sha256()
search = Search(board, 0, rng.random(4) * 10, 3)
for _ in range(3000):
    owner = rng.integers(0, 3, board.n_territories)
    armies = rng.integers(1, 12, board.n_territories)
    h.update(np.float64(search.value(SearchNode(owner, armies, 0))).tobytes())
for players in (2, 3):
    scorer = load_scorer(players)
    for n in range(1, 60):
        h.update(scorer.scores(rng.normal(size=(n, 21)), 1).tobytes())
groups = [(rng.normal(size=(n, 21)), rng.normal(size=(n, 1))) for n in rng.integers(2, 30, 40)]
for part in fit(groups, 0, l2=1e-3, steps=50, learning_rate=0.5, start_temperature=0.01):
    h.update(part.tobytes())
for _ in range(300):
    h.update(dot(rng.random(6), rng.random((6, 42)) < 0.3).tobytes())
print(h.hexdigest())
"""


def _cpu_flags() -> set[str]:
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return set()
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _digest(coretype: str) -> str:
    env = {**os.environ, "OPENBLAS_CORETYPE": coretype}
    return subprocess.run([sys.executable, "-c", DECISIONS], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def test_search_values_do_not_depend_on_the_blas_kernel():
    # OpenBLAS (numpy's wheels build it with every kernel) takes the kernel from OPENBLAS_CORETYPE; its `@`
    # gave different bits under these kernels, and the GA tuned other weights on another CPU.
    kernels = ["Prescott"] + [k for k, flag in (("Haswell", "avx2"), ("SkylakeX", "avx512f")) if flag in _cpu_flags()]
    if len(kernels) < 2:
        pytest.skip("this CPU runs a single OpenBLAS kernel family")
    digests = {k: _digest(k) for k in kernels}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.parametrize("a_shape, b_shape", [((4,), (4,)), ((9, 21), (21,)), ((6,), (6, 42))])
def test_dot_is_the_matrix_product(a_shape, b_shape):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    np.testing.assert_allclose(dot(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_dot_names_shapes_it_cannot_multiply():
    with pytest.raises(ValueError, match=r"\(3,\) and \(4,\)"):
        dot(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(3, 2\)"):
        dot(np.ones((2, 3)), np.ones((3, 2)))
