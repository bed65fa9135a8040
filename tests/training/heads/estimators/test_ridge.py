"""`training.heads.estimators.ridge`: the one ridge and the one-standard-error rule give what the
three ridges and the two rules they replace gave, copied below as they were: the selected heads'
(weighted means and deviations by hand, a non-negative ridge on sign-turned inputs), the learned
heads' and the residual ridges' (scikit-learn's scaler, every alpha a target)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from training.heads.estimators.ridge import fit_ridge, within_one_se


def _selected_head(X, y, w, signs, alpha):  # training.heads.estimators.select.fit_head
    mean = np.average(X, axis=0, weights=w)
    sd = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
    sd[sd == 0] = 1.0
    Z = (X - mean) / sd * signs
    model = Ridge(alpha=alpha, positive=True).fit(Z, y, sample_weight=w)
    coef = model.coef_ * signs / sd
    return coef, float(model.intercept_ - coef @ mean)


def _scaled_ridges(X, y, w, strengths, *, by_row):  # learned.ridge.fit_all, residual_ridge._fit
    with np.errstate(invalid="ignore"):
        scaler = StandardScaler().fit(X, sample_weight=w)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    ridge = Ridge(alpha=strengths).fit(
        (X - scaler.mean_) / scale, np.tile(y[:, None], len(strengths)), sample_weight=w
    )
    coefs, intercepts = np.atleast_2d(ridge.coef_), np.atleast_1d(ridge.intercept_)
    if by_row:  # the learned heads: one alpha at a time
        coef = np.array([coefs[k] / scale for k in range(len(strengths))])
        return coef, np.array([intercepts[k] - coef[k] @ scaler.mean_ for k in range(len(coef))])
    coef = coefs / scale  # the residual ridges: every alpha at once
    return coef, intercepts - coef @ scaler.mean_


def _rows(rng, n, p):
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 50, p) + rng.normal(0, 20, p)
    X[:, 0] = np.round(X[:, 0])  # ties, as counts have
    y = X @ rng.normal(size=p) / 20 + rng.normal(size=n)
    w = rng.uniform(0.2, 3.0, n)
    return X, y, w


@pytest.mark.parametrize("seed", range(6))
def test_the_selected_heads_ridge_is_the_old_one_to_1e_9(seed):
    rng = np.random.default_rng(seed)
    X, y, w = _rows(rng, 300, 4)
    signs = rng.choice([-1.0, 1.0], 4)
    old_coef, old_intercept = _selected_head(X, y, w, signs, 1.0)
    coef, intercept = fit_ridge(X, y, w, [1.0], signs=signs, positive=True)
    np.testing.assert_allclose(coef[0], old_coef, rtol=1e-9, atol=1e-12)
    assert intercept[0] == pytest.approx(old_intercept, rel=1e-9, abs=1e-12)
    assert np.all(coef[0] * signs >= 0)  # each weight takes its sign, or 0


@pytest.mark.parametrize("seed", range(6))
def test_the_learned_ridges_are_the_old_ones_to_the_bit_the_residual_ones_to_1e_12(seed):
    rng = np.random.default_rng(seed)
    X, y, w = _rows(rng, 250, 30)
    X[:, 3] = 2.5  # a column constant on these rows keeps scale 1
    strengths = np.array([10.0, 100.0, 1000.0, 30000.0]) * len(y) / 1000.0
    coef, intercept = fit_ridge(X, y, w, strengths)
    old_coef, old_intercept = _scaled_ridges(X, y, w, strengths, by_row=True)
    np.testing.assert_array_equal(coef, old_coef)
    np.testing.assert_array_equal(intercept, old_intercept)
    # The residual ridges took every intercept in one matrix product: the same to rounding.
    old_coef, old_intercept = _scaled_ridges(X, y, w, strengths, by_row=False)
    np.testing.assert_array_equal(coef, old_coef)
    np.testing.assert_allclose(intercept, old_intercept, rtol=1e-12, atol=1e-12)


def _learned_rule(alphas, per_alpha, top):  # learned.ridge.choose, from the per-file criteria
    within = []
    for alpha, mine in zip(alphas, per_alpha, strict=True):
        diffs = np.array([m - t for m, t in zip(mine, top, strict=True)])
        se = float(diffs.std(ddof=1) / math.sqrt(len(diffs))) if len(diffs) > 1 else 0.0
        if diffs.mean() + se >= 0:
            within.append(alpha)
    return within


def _residual_rule(alphas, whole, F):  # residual_ridge.choose_alpha, from per-fold criteria
    best = int(np.nanargmax(np.nan_to_num(whole, nan=-np.inf)))
    diff = F - F[:, [best]]
    se = diff.std(axis=0, ddof=1) / np.sqrt(len(F)) if len(F) > 1 else np.zeros(len(alphas))
    within = [a for a in range(len(alphas)) if whole[a] >= whole[best] - se[a]]
    return float(alphas[max(within)])


@pytest.mark.parametrize("n_units", [1, 2, 5, 17])
def test_the_one_se_rule_is_both_old_rules(n_units):
    rng = np.random.default_rng(n_units)
    alphas = [10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0]
    for _ in range(300):
        per_alpha = rng.normal(0.3, 0.05, (len(alphas), n_units)).round(rng.integers(2, 6))
        best = int(rng.integers(len(alphas)))
        paired = per_alpha - per_alpha[best]
        assert within_one_se(alphas, paired.mean(axis=1), paired) == _learned_rule(
            alphas, per_alpha, per_alpha[best]
        )
        whole = per_alpha.mean(axis=1) + rng.normal(0, 0.01, len(alphas))
        at = int(np.argmax(whole))
        F = per_alpha.T.copy()
        found = max(within_one_se(alphas, whole - whole[at], (F - F[:, [at]]).T.copy()))
        assert found == _residual_rule(alphas, whole, F)
