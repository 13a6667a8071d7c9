"""Reference solution of the attention exercise (tests only)."""

import numpy as np


def attention_backward(dout, q, k, v):
    T, d = q.shape[1], q.shape[2]
    scale = 1.0 / np.sqrt(d)
    S = q @ k.transpose(0, 2, 1) * scale                               # (B, T, T)
    S = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, S)
    P = np.exp(S - S.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)                                       # (B, T, T)
    dv = P.transpose(0, 2, 1) @ dout                                    # (B, T, d)
    dP = dout @ v.transpose(0, 2, 1)                                    # (B, T, T)
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))                     # (B, T, T)
    return dS @ k * scale, dS.transpose(0, 2, 1) @ q * scale, dv
