"""Brute-force references, written straight from the papers' definitions with no shared code."""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import logsumexp


def standardise(X):
    X = np.asarray(X, float)
    s = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(s > 0, s, 1.0)


def distances(X):
    return np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


def knn_lists(X, k):
    """The k nearest of each point, ties to the lower index (sort by (distance, index))."""
    D = distances(X)
    n = len(X)
    out = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        others.sort(key=lambda j: (D[i, j], j))
        out.append(others[:k])
    return out


def knn_W(X, k, kind):
    """Dense W of the kNN models (000 eq. 3; 003 Boltzmann(2)), for E = sum W_ij [y_i == y_j]."""
    n = len(X)
    lists = knn_lists(X, k)
    W = np.zeros((n, n))
    for i, nb in enumerate(lists):
        W[i, nb] = 1.0 / k
    if kind == "equal":
        U = ((W > 0) | (W > 0).T).astype(float) / k
        return np.triu(U, 1)  # each undirected edge once
    return W


def dnn_W(X, sigma, kernel, eps=1e-10):
    """Row-normalised d-nn weights of 001, section 3."""
    D = distances(X)
    if kernel == "gaussian":
        K = np.exp(-(D**2) / (2 * sigma**2))
    elif kernel == "ball":
        K = eps + (1 - eps) * (D < sigma)
    else:
        K = np.exp(-D * sigma)
    np.fill_diagonal(K, 0.0)
    return K / K.sum(axis=1, keepdims=True)


def energy(W, y, a=None):
    a = np.ones(int(max(y)) + 1) if a is None else np.asarray(a)
    same = (y[:, None] == y[None, :]).astype(float)
    return float((W * same * a[y][:, None]).sum())


def log_pl(C, y, beta, G, a=None):
    """sum_i log P(y_i | y_-i) with P(y_i = g) ∝ exp(beta a_g sum_j C_ij [y_j == g])."""
    a = np.ones(G) if a is None else np.asarray(a)
    total = 0.0
    for i in range(len(y)):
        h = np.array(
            [a[g] * sum(C[i, j] for j in range(len(y)) if j != i and y[j] == g) for g in range(G)]
        )
        total += beta * h[y[i]] - logsumexp(beta * h)
    return total


def exact_probs(W, beta, G, a=None):
    """Probabilities of all labelings in itertools.product order (point 0 most significant)."""
    n = W.shape[0]
    states = np.array(list(itertools.product(range(G), repeat=n)))
    e = np.array([energy(W, s, a) for s in states])
    logp = beta * e - logsumexp(beta * e)
    return states, np.exp(logp)
