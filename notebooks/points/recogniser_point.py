# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     codemirror_mode:
#       name: ipython
#       version: 3
#     file_extension: .py
#     mimetype: text/x-python
#     name: python
#     nbconvert_exporter: python
#     pygments_lexer: ipython3
#     version: 3.11.7
# ---

# %% [markdown]
# # Recogniser comparison: one point
# One recogniser setting scored on the recognition experiment's test runs. Executed by
# `riskcore sweep pipelines/recognisers.yaml`; results go to `recogniser_scores`.

# %% tags=["parameters"]
recogniser: str = "inverse"  # recogniser spec, as for `riskcore recognize --recogniser`
focus_levels: list[float] = [0, 0.5, 0.8, 1]  # focus levels of the test runs to score it on
sweep: str = ""  # set by the sweep runner
point: str = ""  # set by the sweep runner
output_dir: str = ""  # set by the sweep runner: where result tables go

# %%
import pandas as pd

from riskcore.experiments.recognition.focus import experiment_runs
from riskcore.notebook import emit
from riskcore.params import parse
from riskcore.recognition.features import load_features
from riskcore.recognition.recognisers import Recogniser
from riskcore.recognition.scoring import Scorer

spec = parse(recogniser)
if spec.name == "classifier" and "train" not in spec.kwargs:  # learns from the experiment's training runs
    spec = spec.with_defaults({"train": tuple(experiment_runs("train").run)})
rec = Recogniser.from_spec(spec)
test_runs = experiment_runs("test").set_index("focus").run

# %%
frames = []
for focus in focus_levels:
    run = test_runs[focus]
    features = load_features(run)
    scores = Scorer(features).score(rec.posterior(features, run)).reset_index().rename(columns={"point": "share"})
    frames.append(scores.assign(focus=focus, recogniser=rec.name, setting=rec.setting, label=rec.label))
scores = pd.concat(frames, ignore_index=True)
emit(scores, "recogniser_scores", output_dir)
scores.pivot(index="focus", columns="share", values="top1").round(3)
