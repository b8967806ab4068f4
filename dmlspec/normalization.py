"""The normalization accuracy bound: how far a mean-variance or batch normalization may be from
its FLOAT64 value, for the dot-product accuracy model (dmlspec.accuracy) to judge it by.

A normalization sums: its mean and its variance are reductions, judged as the reductions and
TOSA's dot-product model judge sums (Higham, *Accuracy and Stability of Numerical Algorithms*,
2nd ed., 4.2: n terms in any order err by at most (n - 1) u sum|t_i| to first order). The
normalized output's bound follows from them by first-order error propagation (Higham 3.1-3.3:
each rounded operation a relative error of at most u; errors of the operands carried by the
operation's partial derivatives), all in units of u = u(A), A the accumulation type. Per
normalized set of n elements x_i (FLOAT64: m the mean, v the variance, M1 = mean|x|, Q =
mean(x^2), w = v + Epsilon, sigma = sqrt(w), z = (x - m) / sigma):

- mean: the sum (n - 1) M1 n u, the division by n (or a product with a rounded 1/n) 2 |m| u:
  |dm| <= (n + 1) M1 u (`MEAN_TERMS`, bound M1).
- variance: the pages do not say how it is taken, so both usual forms are allowed. Around the
  computed mean (two passes): the centred values' roundings 2 v u, their squares v u, the sum
  (n - 1) v u, the division 2 v u (the mean's own error drops out to first order, since the
  centred values sum to 0): (n + 4) v u. As mean(x^2) - mean(x)^2 (one pass, onnxruntime's
  LayerNormalization and ONNX's MeanVarianceNormalization function): mean(x^2) (n + 2) Q u,
  the square of the mean 2 |m| |dm| + m^2 u <= (2n + 3) Q u (M1^2 <= Q), the difference Q u:
  (3n + 6) Q u, which also bounds the first (v <= Q): |dv| <= (3n + 6) Q u (`VARIANCE_TERMS`,
  bound Q, the mean of the squares: the reductions' magnitude for a sum of squares).
- output, Scale * (x - mean) / sqrt(v + Epsilon) + Bias (+ FusedAdd): the mean's error
  carried by the scale, a |s| / sigma * |dm|; the variance's by the square root, a |x - m| *
  |dv| / (2w) (d sqrt(w) = dw / (2 sqrt(w))); the element-wise steps (the subtraction, adding
  Epsilon, the square root, the division, the scaling, each at most u relative; adding the bias
  and the addend u |y| each) 6 (a (|x| + |m|) + |Bias| + |FusedAdd|), with a = |s| / sigma, so
  that C >= 6 |y|. The
  magnitude |x| + |m| rather than |x - m| admits the affine form x * (s / sigma) + (Bias - m *
  s / sigma) that implementations fold a normalization into (onnxruntime's
  BatchNormalization): its roundings scale with |x| and |m|, not with their difference.
  Without the division (NormalizeVariance FALSE, UseVariance FALSE) a = |s| and no variance
  term; with given statistics (BATCH_NORMALIZATION) dm = dv = 0.

`normalized_allowance` gives that coefficient C: |actual - exact| <= C u. The normalized
outputs' `dot_product` rules state KS = 6 (`ELEMENT_WISE_STEPS`, the steps after the sums) and
the reference gives the bound C / 6 (KS * bound * u(A) = C u(A)): at least |y|, as a dot
product's bound is at least its value, which is what the error statistics are scaled by. The
model holds where the variance's allowance
is small next to w: where dw reaches w / 2 (a variance that cancels, a non-positive Variance +
Epsilon), the sums may overflow the accumulation or a product may in some order
(`products_reach`), any result is accepted (`any_value`; the
dot-product check accepts any result where an intermediate overflows the output type, so the
reference marks those elements with an infinite intermediate). Both are taken for DirectML's
accumulation without execution flags (FLOAT16 in FLOAT32); a backend that declares half
precision gets FLOAT16's unit in the allowance, not in these two masks.

BATCH_NORMALIZATION_TRAINING_GRAD's input gradient, Scale / sigma * ((g - mean(g)) - (x -
mean(x)) * mean(g * (x - mean(x))) / w), is propagated the same way
(`training_gradient_allowance`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ELEMENT_WISE_STEPS",
    "Moments",
    "any_value",
    "mean_terms",
    "moments",
    "normalized_allowance",
    "products_reach",
    "training_gradient_allowance",
    "variance_terms",
]

# The element-wise steps after the statistics, each at most u relative: subtracting the mean,
# adding Epsilon, the square root, the division (or a reciprocal and a product), the scaling,
# the bias; the normalized outputs' KS.
ELEMENT_WISE_STEPS = 6
_UNIT = 2.0**-24  # u(FLOAT32): DirectML's accumulation for FLOAT32 and FLOAT16
_LARGEST = float(np.finfo(np.float32).max)
_TINY = float(np.finfo(np.float32).tiny)


def mean_terms(count: int) -> int:
    """KS of a mean of `count` elements: the sum's terms and the division."""
    return count + 1


def variance_terms(count: int) -> int:
    """KS of a variance of `count` elements, in units of the mean of their squares (two-pass
    or one-pass, see the module's derivation)."""
    return 3 * count + 6


@dataclass(frozen=True)
class Moments:
    """The FLOAT64 statistics of each normalized set, shaped as the input with 1 along the
    normalized axes: `mean` (0 where the set is not centred), `variance` (about that mean),
    `mean_abs` (M1), `mean_square` (Q) and `count` (n, the elements of a set)."""

    count: int
    mean: np.ndarray
    variance: np.ndarray
    mean_abs: np.ndarray
    mean_square: np.ndarray

    def mean_error(self, centered: bool = True) -> np.ndarray:
        """|dm| / u: what the mean's sum and division may err by (0 where not centred)."""
        return mean_terms(self.count) * self.mean_abs if centered else np.zeros_like(self.mean)

    def variance_error(self) -> np.ndarray:
        """|dv| / u: what the variance may err by, taken in either usual form."""
        return variance_terms(self.count) * self.mean_square

    def allowance(
        self,
        x: np.ndarray,
        epsilon: float,
        scale: np.ndarray | float = 1.0,
        bias: np.ndarray | float = 0.0,
        *,
        centered: bool = True,
        divide: bool = True,
        addend: np.ndarray | float = 0.0,
    ) -> np.ndarray:
        """`normalized_allowance` of x normalized by these statistics, with their errors."""
        return normalized_allowance(
            x,
            self.mean,
            self.variance,
            epsilon,
            scale,
            bias,
            mean_error=self.mean_error(centered),
            variance_error=self.variance_error() if divide else 0.0,
            divide=divide,
            addend=addend,
        )

    def sums_overflow(self) -> np.ndarray:
        """Where a sum of the set (of x^2, or of x) may overflow FLOAT32 in some order."""
        with np.errstate(all="ignore"):
            reach = self.count * np.maximum(self.mean_square, self.mean_abs)
            return np.asarray(~(reach * (1 + _UNIT) <= _LARGEST))


def moments(x: np.ndarray, axes: tuple[int, ...], centered: bool = True) -> Moments:
    """The statistics of `x` over `axes` in FLOAT64 (centred about the mean, or about 0)."""
    data = np.asarray(x, np.float64)
    count = int(np.prod([data.shape[a] for a in axes])) if axes else 1
    with np.errstate(all="ignore"):
        if centered:
            mean = data.mean(axis=axes, keepdims=True)
        else:
            mean = np.zeros([1 if i in axes else n for i, n in enumerate(data.shape)])
        variance = np.square(data - mean).mean(axis=axes, keepdims=True)
        mean_abs = np.abs(data).mean(axis=axes, keepdims=True)
        mean_square = np.square(data).mean(axis=axes, keepdims=True)
    return Moments(count, mean, variance, mean_abs, mean_square)


def normalized_allowance(
    x: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
    epsilon: float,
    scale: np.ndarray | float = 1.0,
    bias: np.ndarray | float = 0.0,
    *,
    mean_error: np.ndarray | float = 0.0,
    variance_error: np.ndarray | float = 0.0,
    divide: bool = True,
    addend: np.ndarray | float = 0.0,
) -> np.ndarray:
    """C, per element of Scale * (x - mean) / sqrt(variance + epsilon) + bias + addend (or
    Scale * (x - mean) + bias without the division): |actual - exact| <= C * u to first order,
    given the statistics' own errors in units of u (0 for given statistics)."""
    with np.errstate(all="ignore"):
        x = np.asarray(x, np.float64)
        held = np.abs(x) + np.abs(mean)
        if divide:
            w = np.asarray(variance, np.float64) + epsilon
            a = np.abs(scale) / np.sqrt(w)
            spread = a * np.abs(x - mean) * np.asarray(variance_error) / (2 * w)
        else:
            a = np.abs(scale) * np.ones_like(x)
            spread = np.zeros_like(x)
        allowance = (
            a * (np.asarray(mean_error) + ELEMENT_WISE_STEPS * held)
            + spread
            + ELEMENT_WISE_STEPS * (np.abs(bias) + np.abs(addend))
        )
    return np.asarray(np.broadcast_to(allowance, x.shape))


def any_value(
    variance: np.ndarray,
    epsilon: float,
    variance_error: np.ndarray | float = 0.0,
    overflow: np.ndarray | bool = False,
) -> np.ndarray:
    """Where the first-order model does not hold, so any result is accepted: the variance's
    allowance (or Variance + Epsilon's own rounding) reaches half of Variance + Epsilon, which
    is then not known to be positive, or a sum may overflow."""
    with np.errstate(all="ignore"):
        w = np.asarray(variance, np.float64) + epsilon
        shaky = ~((np.asarray(variance_error) + np.abs(w)) * _UNIT <= w / 2)
    return np.asarray(shaky | np.asarray(overflow, bool))


def products_reach(*factors: np.ndarray | float) -> np.ndarray:
    """The largest magnitude a product of these factors reaches in any order (the scaling
    before or after the division, say): the product of each one's magnitude or 1, whichever
    is larger. Where it overflows, the order decides an overflow: any result is accepted; so
    too (an infinite reach) where a partial product of non-zero factors may fall below the
    smallest normal FLOAT32 value, which a device may flush to zero (the common spec's
    subnormal rule), though the whole product does not."""
    reach, floor = np.ones(()), np.ones(())
    with np.errstate(all="ignore"):
        for factor in factors:
            size = np.abs(np.asarray(factor, np.float64))
            reach = reach * np.maximum(size, 1.0)
            floor = floor * np.where(size == 0, 1.0, np.minimum(size, 1.0))
    return np.asarray(np.where(floor < _TINY, np.inf, reach))


def training_gradient_allowance(
    x: np.ndarray,
    gradient: np.ndarray,
    variance: np.ndarray,
    epsilon: float,
    scale: np.ndarray,
    axes: tuple[int, ...],
) -> np.ndarray:
    """C for BATCH_NORMALIZATION_TRAINING_GRAD's OutputGradient, Scale * Coef0 *
    (gc - xc * mean(g * xc) / w): gc = g - mean(g), xc = x - mean(x), Coef0 = 1 / sqrt(w), w =
    Variance + Epsilon (given), the means over `axes` (n elements): first-order propagation
    of the means' (n + 1) u, the product's mean (n + 3) u, each element-wise step's u."""
    g = np.asarray(gradient, np.float64)
    data = np.asarray(x, np.float64)
    count = int(np.prod([data.shape[a] for a in axes])) if axes else 1
    with np.errstate(all="ignore"):
        w = np.asarray(variance, np.float64) + epsilon
        a = np.abs(scale) / np.sqrt(w)
        xc = data - data.mean(axis=axes, keepdims=True)
        gc = g - g.mean(axis=axes, keepdims=True)
        g_abs = np.abs(g).mean(axis=axes, keepdims=True)
        x_abs = np.abs(data).mean(axis=axes, keepdims=True)
        product = np.abs(g * xc).mean(axis=axes, keepdims=True)  # P: mean(|g * xc|)
        k = np.abs((g * xc).mean(axis=axes, keepdims=True) / w)  # |mean(Coef1)| / w
        xc_abs = np.abs(xc)
        # dgc: (n + 1) g_abs + |gc|; dxc: (n + 1) x_abs + |xc|; d mean(g * xc): (n + 4) P +
        # g_abs * (n + 1) x_abs; its quotient by w two roundings more; the products and the
        # differences one each, the scaling by Scale * Coef0 four.
        allowance = a * (
            (count + 1) * (g_abs + k * x_abs + xc_abs * g_abs * x_abs / w)
            + (count + 4) * xc_abs * product / w
            + 7 * np.abs(gc)
            + 9 * xc_abs * k
        )
    return np.asarray(np.broadcast_to(allowance, data.shape))
