"""sims/models.py: the one transformer of the simulations (Seesaw's causal character LM, MDM's bidirectional
denoiser). Expected values from the architecture written out by hand (parameter count), and from what
causality means (a later token cannot move an earlier logit)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims.models import Transformer, TransformerParams

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "float32_rel": (1e-5, "a changed token must move the later float32 logits (|.| <= 3.9) by more than rounding "
                          "noise, ~1.2e-7 relative per operation; 1e-5 is ~80 float32 ulps, while the change a token "
                          "makes is O(1) (measured max 3.9 causal, 4.5 bidirectional, every entry beyond the bound)"),
    "float32_abs": (1e-8, "a floor for logits near 0 (numpy's default, kept): far below the O(1) change a token "
                          "makes, so it only keeps a zero logit from demanding an exact relative change"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _count(vocab, n_out, L, d, n_layers):
    """Parameters of the architecture, counted by hand: embedding, positions, per block (LayerNorm scale
    and bias x 2, attention q/k/v/out with biases, MLP d -> 4d -> d with biases), final LayerNorm, readout."""
    block = 2 * (2 * d) + 4 * (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
    return vocab * d + L * d + n_layers * block + 2 * d + d * n_out + n_out


@pytest.mark.parametrize("vocab, n_out, L, d, h, n", [(256, 256, 8, 16, 2, 2), (257, 256, 6, 12, 3, 1)])
def test_shapes_and_parameter_count(vocab, n_out, L, d, h, n):
    m = Transformer(vocab=vocab, n_out=n_out, seq_len=L, d_model=d, n_heads=h, n_layers=n, causal=True)
    x = jnp.zeros((3, L), jnp.int32)
    # Shapes only: traced, never compiled (a compile of init is seconds and checks nothing more here).
    params = jax.eval_shape(m.init, jax.random.key(0), x)
    assert jax.eval_shape(m.apply, params, x).shape == (3, L, n_out)
    assert sum(a.size for a in jax.tree.leaves(params)) == _count(vocab, n_out, L, d, n)
    assert all(a.dtype == jnp.float32 for a in jax.tree.leaves(params))


@pytest.mark.parametrize("causal", [True, False])
def test_a_later_token_moves_earlier_logits_only_without_the_causal_mask(causal):
    m = TransformerParams(seq_len=8, d_model=16, n_heads=2, n_layers=2).model(vocab=256, n_out=256, causal=causal)
    x = jax.random.randint(jax.random.key(1), (2, 8), 0, 256)
    params = jax.jit(m.init)(jax.random.key(2), x)
    y = x.at[:, 5].set((x[:, 5] + 1) % 256)  # change position 5 only
    apply = jax.jit(m.apply)  # one compiled program (op-by-op dispatch compiles each primitive: seconds)
    a, b = np.asarray(apply(params, x)), np.asarray(apply(params, y))
    assert not np.allclose(a[:, 5:], b[:, 5:], rtol=TOL["float32_rel"], atol=TOL["float32_abs"])
    earlier_equal = np.array_equal(a[:, :5], b[:, :5])
    assert earlier_equal == causal


def test_heads_must_divide_the_width():
    with pytest.raises(ValueError, match="divisible by n_heads"):
        TransformerParams(d_model=10, n_heads=4)
    assert TransformerParams(d_model=12, n_heads=4).model(10, 3, False).n_heads == 4
