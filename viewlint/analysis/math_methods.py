"""Tensor methods of `torch`'s math library that the main tables in `semantics` fold in: each returns a new tensor on
the receiver's device (never a view, never the receiver itself), in the receiver's layout.

`x.erf()`, `a.maximum(b)`, `counts.bincount()`: a method the tables do not name leaves its result unknown, so a
value made by one lost every fact (a tensor, its device) that the receiver had.
"""

from __future__ import annotations

# Elementwise (the receiver's shape, or the broadcast shape of a binary one; the rank is kept).
MATH_ELEMENTWISE_METHODS = frozenset("""
    erf erfc erfinv atan2 arctan2 maximum minimum fmax fmin logaddexp logaddexp2 logit sinh cosh tan asin acos atan
    arcsin arccos arctan arcsinh arccosh arctanh asinh acosh atanh log10 hypot xlogy floor_divide true_divide multiply
    divide subtract negative absolute bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift
    bitwise_right_shift sgn frac sinc deg2rad rad2deg copysign heaviside nextafter i0 lgamma digamma ldexp
    logcumsumexp renorm hardshrink
""".split())
# Elementwise comparisons: a boolean tensor.
MATH_COMPARISON_METHODS = frozenset("greater greater_equal less less_equal not_equal signbit isclose".split())
# New tensors of another shape.
MATH_RESHAPING_METHODS = frozenset("""
    bincount histc take_along_dim diag diag_embed diagflat trace dot vdot mv inner kron cross rot90 fliplr flipud
    quantile nanquantile msort cov corrcoef logdet det inverse pinverse matrix_power matrix_exp addmv addr addbmm
    index_reduce narrow_copy
""".split())
