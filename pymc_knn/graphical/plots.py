"""Plots of sampled graph posteriors (matplotlib, imported on use)."""

from __future__ import annotations

import numpy as np


def plot_edge_inclusion(inclusion, *, titles=None, axes=None):
    """Heat maps of edge-inclusion probabilities, one panel per matrix.

    Parameters
    ----------
    inclusion : array_like, shape (n_features, n_features) or (n_panels, n, n)
        Posterior edge-inclusion probabilities (for example
        ``GraphicalPredictiveClassifier.edge_inclusion_``).
    titles : sequence of str, default=None
        A title per panel.
    axes : sequence of matplotlib Axes, default=None
        Where to draw; new axes in one row when omitted.

    Returns
    -------
    list of matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    mats = np.asarray(inclusion, dtype=np.float64)
    mats = mats[None] if mats.ndim == 2 else mats
    if mats.ndim != 3 or mats.shape[1] != mats.shape[2]:
        raise ValueError(f"inclusion must be (n, n) or (panels, n, n), got shape {mats.shape}")
    if axes is None:
        _, axes = plt.subplots(1, len(mats), figsize=(3.2 * len(mats), 3), squeeze=False)
        axes = axes[0]
    axes = list(np.atleast_1d(axes))
    if len(axes) != len(mats):
        raise ValueError(f"need {len(mats)} axes, got {len(axes)}")
    image = None
    for i, (ax, m) in enumerate(zip(axes, mats)):
        image = ax.imshow(m, vmin=0.0, vmax=1.0, cmap="Greys")
        ax.set_xlabel("feature")
        ax.set_ylabel("feature")
        if titles is not None:
            ax.set_title(titles[i])
    if image is not None:
        axes[0].figure.colorbar(image, ax=axes, label="edge-inclusion probability", shrink=0.8)
    return axes
