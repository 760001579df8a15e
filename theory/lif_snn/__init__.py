"""Random LIF spiking networks through Boolean function analysis: Araya, Datres, Kutyniok, *Random Spiking
Neural Networks are Stable and Spectrally Simple* (ICLR 2026, arXiv 2511.00904).

The models (discrete time, static or time-varying input, JAX, vectorised over inputs and networks):

* **sLIF** (``kind="slif"``): spikes in {-1, 1}. ``u_t = beta u_{t-1} + w.x_t - (theta/2)(s_{t-1} + 1)``,
  ``s_t = sign(u_t - theta)`` with ``sign(0) = -1`` (strict ``>`` fires). The reset subtracts ``theta``
  one step after a spike and is not multiplied by ``beta``; ``u_0 = 0``, ``s_0 = -1``. ``beta = 1``: sIF.
* **LIF** (``kind="lif"``): the classical model, spikes in {0, 1}: ``u_t = beta u_{t-1} + w.x_t -
  theta s_{t-1}``, ``s_t = H(u_t - theta)``. ``beta = 1``: IF. Classical models read a +-1 input in their
  own alphabet, ``x_i = +1 -> 1``, ``x_i = -1 -> 0`` (:func:`encode_input`); on +-1 input a single IF
  neuron would fire exactly when the sIF neuron does (the two recursions coincide, spike <-> +1).
* **Networks**: L fully connected layers (widths ``(n_0, n_1, ..., n_L)``), weights i.i.d.
  ``N(0, 1/fan_in)``, no bias; layer ``l`` at time ``t`` reads the spikes of layer ``l - 1`` at time ``t``.
  **Readout**: the class is the argmax over the ``n_L`` output neurons of the spike count
  ``sum_t 1[spike]``; **ties go to the lowest index** (class 0). A binary classifier (``n_L = 2``) is
  the Boolean function ``f(x) = +1`` for class 0 and ``-1`` for class 1.
* **Training**: spikes are ``H(v)`` forward and the ATan surrogate ``(alpha/2) / (1 + (pi alpha v / 2)^2)``
  (``alpha = 2``, snnTorch's default) backward (``jax.custom_vjp``); sign spikes are ``2 H - 1``.

The exact single-neuron results (float64, scipy, python-flint), with ``X = w.x`` and ``Y = w.y``
jointly standard normal with correlation ``rho = 1 - 2d/n`` for inputs at Hamming distance ``d``
(``||x||^2 = n``):

* t = 1 flip probability ``2[Q(theta) - P(X > theta, Y > theta)] = 4 T(theta, sqrt(d / (n - d)))`` with
  Owen's T function (``Phi_2(h, h; rho) = Phi(h) - 2 T(h, sqrt((1 - rho)/(1 + rho)))``); at
  ``theta = 0`` it is ``arccos(rho)/pi``. Under the paper's noise model (each bit flipped with
  probability ``nu``) it is the ``Bin(n, nu)`` mixture over ``d``; ``rho = 1 - 2 nu`` is its large-n limit.
* For ``beta = 1`` and static input the spike train depends on ``X`` only and ``s_t`` is a step function
  of ``X`` with jumps at points ``theta m / j`` (``j <= t``), so every ``P[s_t(x) != s_t(y)]`` is a finite
  sum of bivariate-normal orthant probabilities (:func:`static_flip_probabilities`).
* Expected level weights of one random neuron from the distance kernel ``G(d) = 1 - 2 P_flip(d)`` by
  Krawtchouk inversion in ball arithmetic (:func:`expected_level_weights`).
"""

from __future__ import annotations

from theory.lif_snn.exact import (  # noqa: F401 - public names of theory.lif_snn
    distance_kernel,
    expected_level_weights,
    flip_probability_at_distance,
    if_plugin_flip_probability,
    plugin_flip_probability,
    single_neuron_flip_probability,
    small_noise_constants,
    spike_set,
    static_firing_rates,
    static_flip_probabilities,
    static_plugin_flip_probabilities,
    theorem1_width_exponent,
    theorem2_width_exponent,
)
from theory.lif_snn.models import (  # noqa: F401 - public names of theory.lif_snn
    KINDS,
    MAX_EXACT_N,
    PMF_FLOOR,
    SURROGATE_ALPHA,
    binary_readout,
    classify,
    encode_input,
    heaviside,
    init_weights,
    Kind,
    layer_spikes,
    network_table,
    random_stack_spikes,
    run_network,
    run_stack,
    spike_counts,
    static_neuron_spikes,
)

