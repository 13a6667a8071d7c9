"""Reference solution of the softmax exercise (tests only)."""

import numpy as np


def softmax_backward(dy, x):
    e = np.exp(x - x.max(axis=1, keepdims=True))        # (N, D)
    y = e / e.sum(axis=1, keepdims=True)                # (N, D)
    return y * (dy - (y * dy).sum(axis=1, keepdims=True))
