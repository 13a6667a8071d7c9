"""Jacobian heat-maps: the analytical and numerical Jacobians of a gradient check, and their difference.

Importing this module makes it ``gradcheck``'s ``heatmap=`` writer (``autograd.check.HEATMAP_WRITER``).
"""

from __future__ import annotations

import numpy as np

from ..autograd import check as _check


def jacobian_heatmap(jacobians, path, title="Jacobian: analytical, numerical, difference", input_names=None):
    """Save a PNG: per input, the analytical Jacobian, the numerical one, and their difference.

    Args:
        jacobians: ``{input index: (analytical, numerical)}`` 2-D arrays ``(n_outputs, n_inputs)``
            (``gradcheck(..., heatmap=path)`` builds it).
        path: the PNG file to write.
        input_names: optional ``{input index: name}`` for the row titles.

    Returns:
        ``path``.

    Raises:
        ImportError: matplotlib is not installed (``pip install matplotlib``).
        ValueError: ``jacobians`` is empty.
    """
    if not jacobians:
        raise ValueError("jacobian_heatmap: no Jacobians to draw")
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - matplotlib is a dev dependency
        raise ImportError("jacobian_heatmap needs matplotlib: pip install matplotlib") from e
    n = len(jacobians)
    fig, axes = plt.subplots(n, 3, figsize=(11, 3.2 * n), squeeze=False)
    for row, (i, (ana, num)) in enumerate(sorted(jacobians.items())):
        ana, num = np.asarray(ana, dtype=np.float64), np.asarray(num, dtype=np.float64)
        lim = max(float(np.abs(ana).max(initial=0)), float(np.abs(num).max(initial=0)), 1e-300)
        diff = ana - num
        dlim = max(float(np.abs(diff).max(initial=0)), 1e-300)
        name = (input_names or {}).get(i, f"input {i}")
        for col, (mat, lo_hi, cap) in enumerate((
                (ana, lim, "analytical"), (num, lim, "numerical"),
                (diff, dlim, f"analytical − numerical (max {dlim:.2g})"))):
            ax = axes[row][col]
            im = ax.imshow(mat, cmap="RdBu_r", vmin=-lo_hi, vmax=lo_hi, aspect="auto", interpolation="nearest")
            ax.set_title(f"{name}: {cap}", fontsize=9)
            ax.set_xlabel("input element")
            ax.set_ylabel("output element")
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


_check.HEATMAP_WRITER = jacobian_heatmap
