"""Models the simulations train (flax.linen), one definition each, in the style of big_vision's models:
a module whose hyper-parameters are its attributes, and the config fields that set them.

- :class:`Transformer`: tokens -> logits; embedding plus learned positions, ``n_layers`` pre-LayerNorm
  blocks (multi-head attention, GELU MLP of width ``4 d_model``), a final LayerNorm and a readout.
  Causal for the Seesaw character LM (next-byte logits), bidirectional for the MDM denoiser (bytes plus
  a mask token in, byte logits out).
- :class:`TransformerParams`: the config fields of that model (``seq_len``, ``d_model``, ``n_heads``,
  ``n_layers``), the base of every experiment dataclass that trains one; :meth:`TransformerParams.model`
  builds it.

Everything is float32 (parameters and attention), as trained on CPU, GPU and TPU alike.
"""

from __future__ import annotations

import dataclasses

import flax.linen as nn
import jax.numpy as jnp

from sims.config import param

F32 = jnp.float32


class Block(nn.Module):
    """Pre-LayerNorm transformer block: ``x + MHA(LN(x))``, then ``x + W2 gelu(W1 LN(x))`` with ``W1``
    of width ``4 d`` (``d = x.shape[-1]``). ``[batch, L, d] -> [batch, L, d]``; ``causal`` masks future
    positions."""

    n_heads: int
    causal: bool

    @nn.compact
    def __call__(self, x):
        d = x.shape[-1]
        mask = nn.make_causal_mask(jnp.ones(x.shape[:-1], jnp.int32)) if self.causal else None
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.n_heads, dtype=F32, param_dtype=F32)(
            nn.LayerNorm(param_dtype=F32)(x), mask=mask)
        h = nn.Dense(4 * d, param_dtype=F32)(nn.LayerNorm(param_dtype=F32)(x))
        return x + nn.Dense(d, param_dtype=F32)(nn.gelu(h))


class Transformer(nn.Module):
    """``[batch, seq_len]`` int tokens in ``[0, vocab)`` -> ``[batch, seq_len, n_out]`` logits.

    Attributes: ``vocab`` input symbols, ``n_out`` output classes, ``seq_len`` positions (learned
    embedding, N(0, 0.02^2) at init), ``d_model`` width, ``n_heads`` attention heads (dividing
    ``d_model``), ``n_layers`` blocks, ``causal`` (a token sees only itself and earlier ones)."""

    vocab: int
    n_out: int
    seq_len: int
    d_model: int
    n_heads: int
    n_layers: int
    causal: bool

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(self.vocab, self.d_model, param_dtype=F32)(tokens)
        x = x + self.param("pos", nn.initializers.normal(0.02), (self.seq_len, self.d_model), F32)
        for _ in range(self.n_layers):
            x = Block(self.n_heads, self.causal)(x)
        return nn.Dense(self.n_out, param_dtype=F32)(nn.LayerNorm(param_dtype=F32)(x))


@dataclasses.dataclass(frozen=True)
class TransformerParams:
    """Config fields of a :class:`Transformer` (the base of an experiment's dataclass; an experiment
    may restate a field to give it another default).

    Raises:
      ValueError: ``d_model`` is not a multiple of ``n_heads``.
    """

    seq_len: int = param(32, ge=8, doc="tokens per training window")
    d_model: int = param(32, ge=8)
    n_heads: int = param(2, ge=1)
    n_layers: int = param(2, ge=1)

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")

    def model(self, vocab: int, n_out: int, causal: bool) -> Transformer:
        """The :class:`Transformer` of these fields over ``vocab`` input symbols and ``n_out`` outputs."""
        return Transformer(vocab=vocab, n_out=n_out, seq_len=self.seq_len, d_model=self.d_model,
                           n_heads=self.n_heads, n_layers=self.n_layers, causal=causal)
