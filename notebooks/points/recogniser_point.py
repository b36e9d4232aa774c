# %% [markdown]
# # Recogniser comparison: one point
# One recogniser setting scored on one test run. Executed by `riskcore sweep pipelines/recognisers.yaml`;
# results go to `recogniser_scores`.

# %% tags=["parameters"]
focus_levels: str = "0,0.5,0.8,1"  # mission focus of the test runs: reads runs "<run_prefix>-f<focus>"
run_prefix: str = "rec-test"  # prefix of the run name
recogniser: str = "inverse"  # uniform, goal, phatt, inverse or classifier
params: str = ""  # recogniser parameters, comma-separated, as for riskcore recognize --params
scheme: str = "simple"  # phatt only: weighting scheme
weights: str = ""  # phatt only: weights, as for riskcore recognize --weights
train_prefix: str = "rec-train"  # classifier only: trains on every "<train_prefix>-f*" run
sweep: str = ""  # set by the sweep runner
point: str = ""  # set by the sweep runner
output_dir: str = ""  # set by the sweep runner: where result tables go

# %%
from riskcore.notebook import emit
from riskcore.recognition.experiment import FOCUS_LEVELS
from riskcore.recognition.features import load_features
from riskcore.recognition.phatt import PhattWeights
from riskcore.recognition.recognisers import Recogniser, parse_params
from riskcore.recognition.scoring import Scorer

import pandas as pd

train = ",".join(f"{train_prefix}-f{x:g}" for x in FOCUS_LEVELS) if recogniser == "classifier" else None
rec = Recogniser(recogniser, parse_params(params),
                 PhattWeights.parse(scheme, weights) if recogniser == "phatt" else None, train)

# %%
frames = []
for focus in (float(x) for x in focus_levels.split(",")):
    run = f"{run_prefix}-f{focus:g}"
    features = load_features(run)
    scores = Scorer(features).score(rec.posterior(features, run)).reset_index().rename(columns={"point": "share"})
    frames.append(scores.assign(focus=focus, recogniser=recogniser, setting=rec.setting))
scores = pd.concat(frames, ignore_index=True)
emit(scores, "recogniser_scores", output_dir)
scores.pivot(index="focus", columns="share", values="top1").round(3)
