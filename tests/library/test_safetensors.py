"""The numpy reader of .safetensors files (promptdojo/tinylm/safetensors.py), against the format's
reference implementation (the ``safetensors`` package). The reference is not among Pyodide's
packages: where it is missing (these tests run inside Pyodide too), the tests that need it skip
and the others still run."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from promptdojo.tinylm.model import WEIGHTS, TinyLM
from promptdojo.tinylm.safetensors import DTYPES, read_safetensors

try:
    from safetensors.numpy import load_file, save_file
except ImportError:  # inside Pyodide
    load_file = save_file = None
needs_reference = pytest.mark.skipif(load_file is None, reason="the safetensors package is missing")


def test_the_shipped_weights_are_the_model_in_float16() -> None:
    metadata, tensors = read_safetensors(WEIGHTS)
    config = TinyLM.load().config
    assert json.loads(metadata["meta"])["config"] == config.__dict__
    assert tensors["embed"].shape == (config.vocab_size, config.d_model)
    assert tensors["layers.0.w1"].shape == (config.d_model, config.d_ff)
    assert {t.dtype for t in tensors.values()} == {np.dtype(np.float16)}


@needs_reference
def test_the_shipped_weights_read_as_the_reference_reads_them() -> None:
    metadata, tensors = read_safetensors(WEIGHTS)
    reference = load_file(WEIGHTS)
    assert tensors.keys() == reference.keys()
    for name, array in reference.items():
        assert tensors[name].dtype == array.dtype == np.float16
        assert np.array_equal(tensors[name], array), name
    assert json.loads(metadata["meta"])["config"] == TinyLM.load().config.__dict__


@needs_reference
def test_every_dtype_the_reference_writes_reads_back(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    written = {
        f"t{dtype.str}": (rng.standard_normal((3, 5)) * 50).astype(dtype)
        for dtype in DTYPES.values()
    }
    written["scalar"] = np.array(2.5, dtype=np.float32)
    written["empty"] = np.zeros((0, 4), dtype=np.float32)
    path = tmp_path / "w.safetensors"
    save_file(written, path, metadata={"who": "the reference"})
    metadata, tensors = read_safetensors(path)
    assert metadata == {"who": "the reference"}
    for name, array in written.items():
        assert tensors[name].dtype == array.dtype, name
        assert tensors[name].shape == array.shape, name
        assert np.array_equal(tensors[name], array), name
    assert not tensors["t<f4"].flags.writeable  # views of the file's bytes


def _file(tmp_path: Path, header: object, data: bytes = b"", size: int | None = None) -> Path:
    text = json.dumps(header).encode() if not isinstance(header, bytes) else header
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(text) if size is None else size) + text + data)
    return path


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: _file(p, {}, size=1 << 40), "header of 1,099,511,627,776 bytes is longer"),
        (lambda p: _file(p, b"{not json"), "its header is not JSON"),
        (lambda p: _file(p, [1, 2]), "not a JSON object"),
        (lambda p: _file(p, {"w": {"dtype": "F32"}}), "'w' lacks a dtype, a shape"),
        (
            lambda p: _file(p, {"w": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]}}),
            "numpy has no bfloat16",
        ),
        (
            lambda p: _file(
                p, {"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"1"
            ),
            "'w' (F32 [4]) needs 16 bytes",
        ),
        (
            lambda p: _file(
                p, {"w": {"dtype": "F32", "shape": [2**62, 4], "data_offsets": [0, 0]}}
            ),
            "needs 73,786,976,294,838,206,464 bytes",
        ),
        (
            lambda p: _file(p, {"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}),
            "not a list of sizes",
        ),
        (
            lambda p: _file(p, {"w": {"dtype": "F32", "shape": [1], "data_offsets": ["0", 4]}}),
            "not two numbers",
        ),
        (
            lambda p: _file(p, {"w": {"dtype": ["F32"], "shape": [1], "data_offsets": [0, 4]}}),
            "not one numpy reads",
        ),
        (lambda p: _file(p, {"__metadata__": ["a"]}), "not a map of text to text"),
    ],
)
def test_a_file_that_is_not_one_names_the_file_and_the_problem(tmp_path: Path, make, says) -> None:
    path = make(tmp_path)
    with pytest.raises(ValueError, match=r"bad\.safetensors") as raised:
        read_safetensors(path)
    assert says in str(raised.value)


def test_a_file_shorter_than_its_size_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(b"\x01\x02")
    with pytest.raises(ValueError, match="shorter than its 8-byte header size"):
        read_safetensors(path)
