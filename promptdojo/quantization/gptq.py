"""Calibrated quantization: GPTQ chooses int codes against sample inputs, in numpy.

Round-to-nearest treats every weight alone. GPTQ (Frantar et al., 2022) quantizes a layer's input
columns one at a time and, after each, shifts the columns not yet quantized to make up for the
error just made, weighted by how the inputs correlate (the Hessian ``2 XᵀX`` of the layer's
squared output error). The storage format is unchanged, symmetric int codes with a scale per
group of a row, so a GPTQ checkpoint loads like any other; only the codes differ, chosen so that
the layer's *outputs* on inputs like the calibration sample change least.

Example:
    >>> from promptdojo.quantization import quantize_symmetric, snr_db
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(256, 8)) @ rng.normal(size=(8, 64))  # correlated inputs
    >>> w = rng.normal(size=(16, 64))
    >>> rtn = quantize_symmetric(w, 4, group_size=32).dequantize()
    >>> gptq = quantize_gptq(w, x, bits=4, group_size=32).dequantize()
    >>> bool(snr_db(x @ w.T, x @ gptq.T) > snr_db(x @ w.T, x @ rtn.T))
    True
"""

from __future__ import annotations

import numpy as np

from promptdojo.quantization.uniform import QuantizedTensor

__all__ = ["quantize_gptq"]


def quantize_gptq(
    w: object, x: object, bits: int = 4, group_size: int | None = 128, damp: float = 0.01
) -> QuantizedTensor:
    """``w`` (rows = outputs, columns = inputs) quantized by GPTQ against inputs ``x`` (samples,
    inputs), in the layout :func:`quantize_symmetric` returns: symmetric absmax codes within
    ``±(2**(bits-1) - 1)``, one scale per ``group_size`` columns of a row (``None``: one per row).
    Each group's scale comes from the weights as they stand when GPTQ reaches it, as in the
    reference code; ``damp`` adds that fraction of the mean diagonal to the Hessian (GPTQ's
    ``percdamp``).
    """
    weights = np.array(w, dtype=np.float64)
    inputs = np.asarray(x, dtype=np.float64)
    if weights.ndim != 2 or inputs.ndim != 2 or inputs.shape[1] != weights.shape[1]:
        raise ValueError(
            f"w must be (outputs, inputs) and x (samples, inputs); got {weights.shape} and "
            f"{inputs.shape}"
        )
    if not 2 <= bits <= 8:
        raise ValueError(f"bits must be from 2 to 8, got {bits!r}")
    columns = weights.shape[1]
    group = group_size or columns
    if columns % group:
        raise ValueError(f"rows of {columns} weights do not split into groups of {group}")
    top = 2 ** (bits - 1) - 1
    hessian = 2 * inputs.T @ inputs
    hessian += damp * np.mean(np.diag(hessian)) * np.eye(columns)
    upper = np.linalg.cholesky(np.linalg.inv(hessian)).T  # Uᵀ U = H⁻¹, as GPTQ's cholesky
    rows = weights.shape[0]
    codes = np.empty((rows, columns), dtype=np.int8)
    scales = np.empty((rows, columns // group, 1))
    for i in range(columns):
        if i % group == 0:
            amax = np.abs(weights[:, i : i + group]).max(axis=1)
            scales[:, i // group, 0] = np.where(amax > 0, amax / top, 1.0)
        scale = scales[:, i // group, 0]
        codes[:, i] = np.clip(np.rint(weights[:, i] / scale), -top, top)
        error = (weights[:, i] - codes[:, i] * scale) / upper[i, i]
        weights[:, i + 1 :] -= np.outer(error, upper[i, i + 1 :])
    grouped = codes.reshape(rows, columns // group, group)
    return QuantizedTensor(grouped, scales, None, bits, (rows, columns), group_size)
