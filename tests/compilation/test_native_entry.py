"""``model.rhs`` / ``model.rhs_many`` through the compiled entry (compilation/native_entry.py).

The entry runs the model's right-hand side as one C function: its numbers must be the
Python path's (``NumericModel.rhs``, the careful path) to round-off (the C routine solves
small systems by its own LU and Cholesky code, the Python path by LAPACK), rhs_many's rows
those of rhs to the bit, and everything unusual
(a list, a wrong length, a dict of constants, specified inputs, a partition, a singular
system) must reach the careful path, which converts, raises or solves it.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import symbody as sb
from symbody.compilation import available_backends, native_entry
from symbody.compilation.numeric_model import NumericModel
from symbody.errors import InputError
from symbody.models import four_bar, n_link_pendulum_on_cart, rolling_disc, snakeboard

pytestmark = pytest.mark.skipif("c" not in available_backends(), reason="no C compiler")


def _same(model, a, b) -> bool:
    """Equal to round-off (another LU / Cholesky code on the same kernel outputs)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(b).max()))


def _states(model, P, x, k=6, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        y = x + 0.1 * rng.standard_normal(x.size)
        out.append(model.consistent_state(y, P) if model.M else y)
    return np.array(out)


@pytest.mark.parametrize("build", [four_bar, snakeboard, rolling_disc, lambda: n_link_pendulum_on_cart(3)],
                         ids=["four-bar", "snakeboard", "rolling disc", "chain"])
def test_entry_equals_python_path_bit_for_bit(build):
    mdl = build()
    model = sb.compile(mdl.eom)                          # the default backend
    P = model.constants_array(mdl.constants)
    x = model.state_array(mdl.initial_state)
    X = _states(model, P, x)
    first = model.rhs(0.0, X[0], P)                    # the first call installs the entry
    assert type(model.rhs).__name__ == "Entry" and type(model.rhs_many).__name__ == "Entry"
    assert _same(model, first, NumericModel.rhs(model, 0.0, X[0], P))
    for k, y in enumerate(X):
        t = 0.3 * k
        ref = NumericModel.rhs(model, t, y, P)
        got = model.rhs(t, y, P)
        assert type(got) is np.ndarray and got.dtype == float and got.shape == y.shape
        assert _same(model, got, ref)
        assert np.array_equal(model.rhs(t, y, P, None, None), got)
        assert np.array_equal(model.rhs(t, y, P, r=None, partition=None), got)
        assert np.array_equal(model.rhs(np.float64(t), y, P), got)
        assert np.array_equal(model.rhs(t, list(y), P), ref)            # converted by the careful path
        assert np.array_equal(model.rhs(t, y, dict(zip(model.constants, P))), ref)
    # rhs_many: one C loop, each row the single call's numbers; t scalar or per state
    T = 0.3 * np.arange(len(X))
    many = model.rhs_many(T, X, P)
    assert np.array_equal(many, np.array([model.rhs(t, y, P) for t, y in zip(T, X)]))
    assert _same(model, many, np.array([NumericModel.rhs(model, t, y, P) for t, y in zip(T, X)]))
    assert np.array_equal(model.rhs_many(0.0, X, P)[2], model.rhs(0.0, X[2], P))
    assert model.rhs_many(0.0, X[:0], P).shape == (0, X.shape[1])
    # a non-contiguous batch, a list of lists: the careful path (round-off of its batched solves)
    np.testing.assert_allclose(model.rhs_many(T, np.asfortranarray(X), P), many, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.rhs_many(T, X.tolist(), P), many, rtol=1e-9, atol=1e-9)


def test_entry_keeps_the_errors_of_the_careful_path():
    mdl = four_bar()
    model = sb.compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    x = model.consistent_state(model.state_array(mdl.initial_state), P)
    model.rhs(0.0, x, P)
    assert type(model.rhs).__name__ == "Entry"
    with pytest.raises(InputError, match="the state has 4 values"):
        model.rhs(0.0, x[:-1], P)
    with pytest.raises(InputError, match="the state has 4 values"):
        model.rhs(0.0, np.zeros((2, 4)), P)
    with pytest.raises(InputError):
        model.rhs(0.0, x, P[:-1])                        # too few constants
    with pytest.raises(InputError):
        model.rhs(0.0, x, {"m": 1.0})                    # missing constants, named
    with pytest.raises(TypeError):
        model.rhs(0.0, x)                                # p is required
    with pytest.raises(TypeError):
        model.rhs(0.0, x, P, bogus=None)                 # an unknown keyword
    with pytest.raises(InputError, match=r"X must have shape \(k, 4\)"):
        model.rhs_many(0.0, np.zeros((3, 5)), P)
    with pytest.raises((ValueError, InputError)):
        model.rhs_many(np.zeros(2), np.tile(x, (3, 1)), P)   # 2 times for 3 states
    # float32 and integer states are converted by the careful path, not misread
    assert np.array_equal(model.rhs(0.0, x.astype(np.float32), P),
                          NumericModel.rhs(model, 0.0, x.astype(np.float32).astype(float), P))


def test_singular_system_reaches_the_careful_path():
    """A singular augmented system: the C routine returns non-zero and the Python path raises
    its error naming the system."""
    mdl = four_bar()
    model = sb.compile(mdl.eom)
    P = model.constants_array(mdl.constants).copy()
    x = model.consistent_state(model.state_array(mdl.initial_state), P)
    model.rhs(0.0, x, P)
    P[model.constants.index(next(c for c in model.constants if str(c) == "m"))] = 0.0
    with pytest.raises(sb.errors.SymbodyError):
        NumericModel.rhs(model, 0.0, x, P)
    with pytest.raises(sb.errors.SymbodyError):
        model.rhs(0.0, x, P)
    with pytest.raises(sb.errors.SymbodyError):
        model.rhs_many(0.0, np.array([x, x]), P)


def test_specified_inputs():
    """Inputs given as values go through the entry (one row, or one row per state in
    rhs_many); as a function, a dict, NaN or missing they take the careful path."""
    mdl = n_link_pendulum_on_cart(2, force=True)
    model = sb.compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    X = _states(model, P, model.state_array(mdl.initial_state))
    r = np.array([0.5])
    got = model.rhs(0.0, X[0], P, r)                     # (the first call installs the entry)
    ref = NumericModel.rhs(model, 0.0, X[0], P, r)
    assert _same(model, got, ref)
    assert type(model.rhs).__name__ == "Entry"
    assert np.array_equal(model.rhs(0.0, X[0], P, r=r), got)
    assert np.array_equal(model.rhs(0.0, X[0], P, [0.5]), ref)          # the careful path
    assert np.array_equal(model.rhs(0.0, X[0], P, {"F": 0.5}), ref)
    assert np.array_equal(model.rhs(0.0, X[0], P, lambda t, x: r), ref)
    assert not _same(model, model.rhs(0.0, X[0], P, r + 1.0), ref)
    with pytest.raises(InputError):
        model.rhs(0.0, X[0], P)                          # the inputs are needed
    with pytest.raises(InputError):
        model.rhs(0.0, X[0], P, np.array([np.nan]))
    R = np.linspace(-1.0, 1.0, len(X))[:, None]
    many = model.rhs_many(0.0, X, P, R)
    assert np.array_equal(many, np.array([model.rhs(0.0, y, P, q) for y, q in zip(X, R)]))
    assert _same(model, many, np.array([NumericModel.rhs(model, 0.0, y, P, q) for y, q in zip(X, R)]))
    assert np.array_equal(model.rhs_many(0.0, X, P, r)[3], model.rhs(0.0, X[3], P, r))


def test_other_backends_keep_the_python_methods():
    llvm = sb.compile(four_bar().eom, backend="llvm")
    mdl = four_bar()
    llvm.rhs(0.0, llvm.consistent_state(llvm.state_array(mdl.initial_state),
                                        llvm.constants_array(mdl.constants)),
             llvm.constants_array(mdl.constants))
    assert type(llvm.rhs).__name__ == "method"           # LLVM kernels have no C entry point


def test_pickled_model_gets_its_own_entry():
    mdl = four_bar()
    model = sb.compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    x = model.consistent_state(model.state_array(mdl.initial_state), P)
    ref = model.rhs(0.0, x, P)
    copy = pickle.loads(pickle.dumps(model))
    assert np.array_equal(copy.rhs(0.0, x, P), ref)
    assert type(copy.rhs).__name__ == "Entry"


def test_without_a_compiler_the_python_path_runs(tmp_path):
    """CC pointing nowhere and no cc on PATH: no C kernels, no entry, the same API."""
    code = (
        "import numpy as np, symbody as sb\n"
        "from symbody.compilation import c_kernels\n"
        "assert c_kernels.compiler_available() is None\n"
        "mdl = sb.models.four_bar()\n"
        "m = sb.compile(mdl.eom)\n"
        "P = m.constants_array(mdl.constants)\n"
        "x = m.consistent_state(m.state_array(mdl.initial_state), P)\n"
        "y = m.rhs(0.0, x, P)\n"
        "assert type(m.rhs).__name__ == 'method' and m.kernels.main.realize().backend != 'c'\n"
        "assert np.allclose(m.rhs_many(0.0, np.array([x, x]), P)[1], y)\n"
        "print('ok')\n")
    env = {"CC": "/nonexistent/cc", "PATH": str(tmp_path), "SYMBODY_CACHE_DIR": str(tmp_path / "c"),
           "PYTHONPATH": ":".join(sys.path)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_extension_is_cached_and_verified(tmp_path, monkeypatch):
    """The extension is built once and found again by its key; a damaged copy is rebuilt."""
    module = native_entry.extension()
    assert module is not None and hasattr(module, "make")
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native_entry._EXTENSION, "_tried", [])
    assert native_entry.extension() is not None
    libs = list(tmp_path.rglob("*.so"))
    assert len(libs) == 1
    libs[0].unlink()                     # (never overwrite a library this process has mapped)
    libs[0].write_bytes(b"not a library")
    monkeypatch.setattr(native_entry._EXTENSION, "_tried", [])
    assert native_entry.extension() is not None           # rebuilt
    assert list(tmp_path.rglob("*.so"))[0].read_bytes()[:4] == b"\x7fELF"


def test_no_inputs_and_an_empty_input_array_take_the_entry(monkeypatch):
    """A model without specified inputs called with ``r = np.zeros(0)`` (what a loop over
    robots passes for an unactuated free body) stays in the compiled entry."""
    careful = NumericModel.rhs
    calls = []

    def counted(self, *args, **kwargs):
        calls.append(1)
        return careful(self, *args, **kwargs)

    monkeypatch.setattr(NumericModel, "rhs", counted)
    mdl = n_link_pendulum_on_cart(2)
    model = sb.compile(mdl.eom)
    P = model.constants_array(mdl.constants)
    x = model.state_array(mdl.initial_state) + 0.1
    first = model.rhs(0.0, x, P)                      # installs the entry (one careful call)
    assert type(model.rhs).__name__ == "Entry"
    calls.clear()
    assert np.array_equal(model.rhs(0.0, x, P, np.zeros(0)), first)
    assert np.array_equal(model.rhs(0.0, x, P), first)
    assert calls == []
