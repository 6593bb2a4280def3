"""NumericModel pickling, model.save / symbody.load_model: same numbers to the last bit,
versions and hashes checked, nothing unpickled from a file."""

from __future__ import annotations

import json
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import symbody as sb
from symbody.compilation import persistence
from symbody.errors import InputError


@pytest.fixture(scope="module")
def four_bar():
    zoo = sb.models.four_bar()
    return zoo, sb.compile(zoo.eom)


def _run(model, zoo):
    return sb.simulate(model, (0.0, 1.5), zoo.initial_state, zoo.constants,
                       solver=sb.Solver(rtol=1e-9, atol=1e-10))


def test_pickle_round_trip_gives_the_same_trajectory_bit_for_bit(four_bar):
    zoo, model = four_bar
    data = pickle.dumps(model)
    copy = pickle.loads(data)
    assert copy.eom is None                   # the SymPy equations are not pickled by default
    assert copy.states == model.states and copy.constants == model.constants
    a, b = _run(model, zoo), _run(copy, zoo)
    assert a.success and np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)
    assert np.array_equal(a.u, b.u) and np.array_equal(a.multipliers, b.multipliers)
    # the equations only when asked
    with_eom = pickle.loads(persistence.dumps(model, equations=True))
    assert with_eom.eom is not None and with_eom.eom.q == model.eom.q
    assert len(persistence.dumps(model, equations=True)) > len(data)


def test_spawn_process_pool_gives_the_same_trajectory_bit_for_bit(four_bar):
    zoo, model = four_bar
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        remote = pool.submit(sb.simulate, model, (0.0, 1.5), zoo.initial_state, zoo.constants,
                             rtol=1e-9, atol=1e-10).result()
    local = _run(model, zoo)
    assert np.array_equal(local.t, remote.t) and np.array_equal(local.x, remote.x)


def test_save_and_load_without_compiling(four_bar, tmp_path, monkeypatch):
    zoo, model = four_bar
    path = model.save(tmp_path / "four_bar")
    assert path.name == "four_bar.symbody.npz"
    # loading must not compile: make any compilation fail
    from symbody.compilation import codegen

    def refuse(*args, **kwargs):
        raise AssertionError("load_model compiled a kernel")

    monkeypatch.setattr(codegen.se, "Lambdify", refuse)
    loaded = sb.load_model(tmp_path / "four_bar")          # the suffix is found
    monkeypatch.undo()
    a, b = _run(model, zoo), _run(loaded, zoo)
    assert np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)
    assert loaded.eom is None and "NumericModel" in repr(loaded)
    # the file is a plain npz: readable without unpickling anything
    with np.load(path, allow_pickle=False) as data:
        header = json.loads(data["header"].tobytes().decode())
    assert header["versions"]["symengine"] == persistence.versions()["symengine"]
    assert header["versions"]["symbody"] == sb.__version__


def test_load_without_machine_code_rebuilds_from_expressions(four_bar, tmp_path):
    zoo, model = four_bar
    path = model.save(tmp_path / "fb.npz")
    rebuilt = sb.load_model(path, machine_code=False)
    x = model.state_array(zoo.initial_state) + 0.1
    # the same expressions compiled again: equal up to the order of floating-point
    # operations symengine's common-subexpression pass picks (a few ulps)
    np.testing.assert_allclose(rebuilt.rhs(0.3, x, zoo.constants), model.rhs(0.3, x, zoo.constants),
                               rtol=1e-13, atol=1e-13)


def _rewrite(path, edit):
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(arrays["header"].tobytes().decode())
    edit(header, arrays)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    # the whole-file digest recomputed: the checks after it are what these tests look at
    arrays["digest"] = np.frombuffer(persistence.file_digest(arrays).encode(), dtype=np.uint8)
    np.savez(path, **arrays)


def test_incompatible_versions_are_refused_clearly(four_bar, tmp_path):
    _, model = four_bar
    path = model.save(tmp_path / "old.npz")
    _rewrite(path, lambda h, a: h["versions"].update(symengine="0.0.1"))
    with pytest.raises(InputError, match=r"symengine '0\.0\.1'.*machine code cannot be used"):
        sb.load_model(path)
    # without the machine code it can be rebuilt from the expressions
    assert sb.load_model(path, machine_code=False).N == model.N
    # another symbody version (issue 34): its machine code is refused, its expressions are
    # rebuilt with machine_code=False, as the guide says
    _rewrite(path, lambda h, a: h["versions"].update(symbody="0.0.0"))
    with pytest.raises(InputError, match=r"symbody '0\.0\.0'.*machine_code=False"):
        sb.load_model(path)
    assert sb.load_model(path, machine_code=False).N == model.N
    _rewrite(path, lambda h, a: h.update(format="symbody-model-99"))
    with pytest.raises(InputError, match=r"not a symbody model file of format"):
        sb.load_model(path, machine_code=False)


def test_damaged_or_foreign_files_are_refused(four_bar, tmp_path):
    _, model = four_bar
    path = model.save(tmp_path / "bad.npz")

    def flip(h, a):
        blob = next(k for k in a if k.startswith("blob_"))
        b = a[blob].copy()
        b[len(b) // 2] ^= 0xFF
        a[blob] = b

    _rewrite(path, flip)
    with pytest.raises(InputError, match="damaged.*SHA-256"):
        sb.load_model(path)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(InputError, match="not a symbody model file"):
        sb.load_model(other)
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(InputError, match="not a symbody model file"):
        sb.load_model(tmp_path / "text.npz")
    with pytest.raises(InputError, match="no such model file"):
        sb.load_model(tmp_path / "missing.npz")


def test_numpy_backend_pickles_but_is_not_saved(four_bar, tmp_path):
    zoo, _ = four_bar
    model = sb.compile(zoo.eom, backend="numpy")
    x = model.state_array(zoo.initial_state)
    copy = pickle.loads(pickle.dumps(model))
    assert np.array_equal(copy.rhs(0.0, x, zoo.constants), model.rhs(0.0, x, zoo.constants))
    with pytest.raises(InputError, match="backend='llvm' or 'lambda'"):
        model.save(tmp_path / "np")


def test_a_format_1_file_still_loads(four_bar):
    """tests/data/four_bar_model_format1.npz: ``sb.models.four_bar()`` compiled and saved
    with ``machine_code=False`` by symbody at commit 04d6d96 (format symbody-model-1, every
    attribute of the model by name), before the kernel layout had a class of its own."""
    from pathlib import Path
    zoo, model = four_bar
    path = Path(__file__).parents[1] / "data" / "four_bar_model_format1.npz"
    with np.load(path, allow_pickle=False) as data:
        assert json.loads(data["header"].tobytes().decode())["format"] == "symbody-model-1"
    old = sb.load_model(path)
    assert old.layout == model.layout and old.states == model.states
    assert old.constants == model.constants
    x = model.state_array(zoo.initial_state) + 0.1
    np.testing.assert_allclose(old.rhs(0.3, x, zoo.constants), model.rhs(0.3, x, zoo.constants),
                               rtol=1e-13, atol=1e-13)
    assert persistence.FORMAT == "symbody-model-3"
