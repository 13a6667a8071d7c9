"""Reference solution of the linear exercise (tests only)."""


def linear_backward(dy, x, weight):
    return dy @ weight, dy.T @ x, dy.sum(axis=0)
