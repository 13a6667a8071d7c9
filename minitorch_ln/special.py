"""``minitorch_ln.special``: the ``torch.special`` functions. The gamma family, Bessel, normal-distribution
and other special functions are in ``ops/special_fns.py``, those without gradients (Bessel j/y/k, Airy, the
orthogonal polynomials) and zeta in ``ops/special_bessel.py``; the rest are the top-level ops under
``torch.special``'s names (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``,
``multigammaln`` is ``mvlgamma``)."""

from .ops.activation import sigmoid as expit
from .ops.binary import xlogy
from .ops.elementwise import erf
from .ops.reduction import logsumexp
from .ops.softmax import log_softmax as _log_softmax
from .ops.softmax import softmax as _softmax
from .ops.special_bessel import (
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t, chebyshev_polynomial_u,
    chebyshev_polynomial_v, chebyshev_polynomial_w, shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w,
    hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p, modified_bessel_i0,
    modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, spherical_bessel_j0, zeta
)
from .ops.special_bessel import igamma as gammainc
from .ops.special_bessel import igammac as gammaincc
from .ops.special_fns import (
    digamma, entr, erfcx, i0, i0e, i1, i1e, lgamma, log_ndtr, logit, mvlgamma, ndtr, ndtri, polygamma, sinc, xlog1py
)
from .ops.unary import exp2, expm1, log1p, round  # noqa: A004
from .ops.unary_trig import erfc, erfinv

gammaln, psi, multigammaln = lgamma, digamma, mvlgamma


def softmax(input, dim, dtype=None):  # noqa: A002
    """``exp(x) / Σ exp(x)`` along ``dim``, after casting to ``dtype`` if given (``torch.special.softmax``)."""
    return _softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input, dim, dtype=None):  # noqa: A002
    """``x - logsumexp(x)`` along ``dim``, after casting to ``dtype`` if given (``torch.special.log_softmax``)."""
    return _log_softmax(input if dtype is None else input.to(dtype), dim)


__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "gammainc", "gammaincc",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
           "legendre_polynomial_p", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "spherical_bessel_j0", "zeta",
           "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1",
           "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]

from .ops.out_variants import add_out  # noqa: E402

add_out(globals(), __all__, "special")  # every torch.special function takes out= (ops/out_variants.py)
