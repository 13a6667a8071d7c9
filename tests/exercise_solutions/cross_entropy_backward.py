"""Reference solution of the cross_entropy exercise (tests only)."""

import numpy as np


def cross_entropy_backward(dloss, logits, target):
    N = logits.shape[0]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))   # (N, C)
    p = e / e.sum(axis=1, keepdims=True)                     # (N, C)
    p[np.arange(N), target] -= 1.0
    return p * (dloss / N)
