"""The networks as JAX functions ``f(theta, X)`` (float, for numeric ranks and training)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from theory.neuromanifold.activations import _float_coeffs, _jsigma
from theory.neuromanifold.architectures import (
    _shape_info,
    _unflatten_cnn,
    _unflatten_mlp,
    check_cnn,
    check_widths,
    cnn_layer_sizes,
)


def mlp_apply(theta, X, widths: Sequence[int], activation_coeffs):
    """``f_W(X)`` in JAX. theta: ``(N,)``; X: ``(M, d_0)``; returns ``(M, d_L)``. Raises: as
    :func:`check_widths` and :func:`theory.neuromanifold.activations.activation`."""
    w = check_widths(widths)
    cs = _float_coeffs(activation_coeffs)
    Ws = _unflatten_mlp(theta, w)
    h = X
    for l, W in enumerate(Ws):
        h = h @ W.T
        if l < len(Ws) - 1:
            h = _jsigma(cs, h)
    return h


def cnn_apply(theta, X, filter_sizes: Sequence[int], strides: Sequence[int], activation_coeffs):
    """``f_W(X)`` in JAX. theta: ``(|k|,)``; X: ``(M, d_0)``; returns ``(M,)``. Raises: as
    :func:`check_cnn` and :func:`theory.neuromanifold.activations.activation`."""
    k, s = check_cnn(filter_sizes, strides)
    cs = _float_coeffs(activation_coeffs)
    ws = _unflatten_cnn(theta, k)
    d = cnn_layer_sizes(k, s)
    h = X
    for l in range(len(k)):
        stride = s[l] if l < len(s) else 1
        idx = stride * np.arange(d[l + 1])[:, None] + np.arange(k[l])[None, :]
        h = (h[:, idx] * ws[l]).sum(-1)
        if l < len(k) - 1:
            h = _jsigma(cs, h)
    return h[:, 0]


def network_apply(kind: str, shape: Any, activation_coeffs):
    """``f(theta, X)`` for ``kind`` (MLP output ``(M, d_L)``, CNN ``(M,)``), JAX-traceable.

    Raises: TypeError / ValueError for an invalid kind, shape or activation (checked here, not at trace
    time)."""
    shp, _, _ = _shape_info(kind, shape)
    cs = _float_coeffs(activation_coeffs)
    if kind == "mlp":
        return lambda th, X: mlp_apply(th, X, shp, cs)
    return lambda th, X: cnn_apply(th, X, shp[0], shp[1], cs)
