"""Reference solution of the group_norm exercise (tests only)."""

import numpy as np


def group_norm_backward(dy, x, num_groups, weight, eps):
    N, C, L = x.shape
    xg = x.reshape(N, num_groups, -1)                                          # (N, G, M)
    mean = xg.mean(axis=2, keepdims=True)                                      # (N, G, 1)
    rstd = 1.0 / np.sqrt(((xg - mean) ** 2).mean(axis=2, keepdims=True) + eps)  # (N, G, 1)
    xhat = (xg - mean) * rstd                                                  # (N, G, M)
    dxhat = (dy * weight[:, None]).reshape(N, num_groups, -1)                  # (N, G, M)
    dx = rstd * (dxhat - dxhat.mean(2, keepdims=True) - xhat * (dxhat * xhat).mean(2, keepdims=True))
    return dx.reshape(N, C, L), (dy * xhat.reshape(N, C, L)).sum(axis=(0, 2)), dy.sum(axis=(0, 2))
