"""pm.sample() with its defaults (4 chains) on scikit-learn's breast cancer set with 10% of the labels
missing (NaN) and the covariates as pm.Data: time, R-hat, ESS, and the imputed labels' accuracy.

    .venv/bin/python benchmarks/bench_missing_labels.py
"""

import time, numpy as np, pymc as pm, pymc_knn as pk, arviz as az
from sklearn.datasets import load_breast_cancer

X, y = load_breast_cancer(return_X_y=True)
rng = np.random.default_rng(0)
mask = rng.random(len(y)) < 0.1
y_obs = y.astype(float)
y_obs[mask] = np.nan
with pm.Model() as m:
    Xd = pm.Data("X", X)
    beta = pm.Uniform("beta", 0, 4)
    k = pm.DiscreteUniform("k", 1, 30)
    pk.PottsKNN("y", Xd, beta, k, observed=y_obs)
    t = time.time()
    idata = pm.sample(random_seed=1, chains=4, cores=2, progressbar=False)
    print("time", round(time.time() - t, 1))
print(az.summary(idata, var_names=["beta", "k"])[["mean", "sd", "ess_bulk", "ess_tail", "r_hat"]])
p = pk.imputed_proba(idata)
print("missing", mask.sum(), "imputed accuracy", np.mean(p.values.argmax(1) == y[mask]))
