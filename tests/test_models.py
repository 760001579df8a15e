"""sims/models.py: the one transformer of the simulations (Seesaw's causal character LM, MDM's bidirectional
denoiser). Expected values from the architecture written out by hand (parameter count), and from what
causality means (a later token cannot move an earlier logit)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims.models import Transformer, TransformerParams


def _count(vocab, n_out, L, d, n_layers):
    """Parameters of the architecture, counted by hand: embedding, positions, per block (LayerNorm scale
    and bias x 2, attention q/k/v/out with biases, MLP d -> 4d -> d with biases), final LayerNorm, readout."""
    block = 2 * (2 * d) + 4 * (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
    return vocab * d + L * d + n_layers * block + 2 * d + d * n_out + n_out


@pytest.mark.parametrize("vocab, n_out, L, d, h, n", [(256, 256, 8, 16, 2, 2), (257, 256, 6, 12, 3, 1)])
def test_shapes_and_parameter_count(vocab, n_out, L, d, h, n):
    m = Transformer(vocab=vocab, n_out=n_out, seq_len=L, d_model=d, n_heads=h, n_layers=n, causal=True)
    x = jnp.zeros((3, L), jnp.int32)
    params = jax.jit(m.init)(jax.random.key(0), x)
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
    assert not np.allclose(a[:, 5:], b[:, 5:])
    earlier_equal = np.array_equal(a[:, :5], b[:, :5])
    assert earlier_equal == causal


def test_heads_must_divide_the_width():
    with pytest.raises(ValueError, match="divisible by n_heads"):
        TransformerParams(d_model=10, n_heads=4)
    assert TransformerParams(d_model=12, n_heads=4).model(10, 3, False).n_heads == 4
