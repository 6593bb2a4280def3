"""Saved models (issue 34, item 5): a digest over the whole file refuses damage anywhere (an
edited header included); the versions decide only whether the machine code can run, so
machine_code=False opens a file of another symbody version; a model rebuilt without the
machine code equals the saved one to round-off (symengine's term order, see
compilation/persistence.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import symbody as sb
from symbody.compilation.persistence import FORMAT, file_digest


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    zoo = sb.models.four_bar()
    model = sb.compile(zoo.eom)
    path = model.save(tmp_path_factory.mktemp("model") / "four_bar.npz")
    return zoo, model, path


def _run(model, zoo):
    return sb.simulate(model, (0.0, 5.0), model.state_array(zoo.initial_state),
                       model.constants_array(zoo.constants), t_eval=np.linspace(0, 5, 201))


def _rewritten(path, out, edit, rehash=False):
    """A copy of the saved file with ``edit(header, members)`` applied (the zip's CRCs are new;
    ``rehash``: the whole-file digest recomputed as well)."""
    with np.load(path, allow_pickle=False) as data:
        members = {k: data[k] for k in data.files}
    header = json.loads(members["header"].tobytes().decode())
    edit(header, members)
    members["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    if rehash:
        members["digest"] = np.frombuffer(file_digest(members).encode(), dtype=np.uint8)
    np.savez(out, **members)
    return out


def _swap_two_constants(header, members):
    consts = header["symbols"]["constants"]["tuple"]
    a, b = consts[0]["sympy"], consts[1]["sympy"]
    a["symbol"], b["symbol"] = b["symbol"], a["symbol"]


def _same_to_round_off(a, b, model, zoo):
    """rhs of the two models at random states: equal to round-off (symengine's term order)."""
    rng = np.random.default_rng(4)
    x0, p = model.state_array(zoo.initial_state), model.constants_array(zoo.constants)
    for _ in range(50):
        x = x0 + 0.2 * rng.standard_normal(x0.shape)
        ra, rb = a.rhs(0.0, x, p), b.rhs(0.0, x, p)
        np.testing.assert_allclose(ra, rb, rtol=1e-12, atol=1e-12 * np.abs(rb).max())


def test_loaded_models_equal_the_saved_one(saved):
    zoo, model, path = saved
    ref = _run(model, zoo)
    run = _run(sb.load_model(path), zoo)               # with the machine code: to the bit
    np.testing.assert_array_equal(run.x, ref.x)
    _same_to_round_off(sb.load_model(path, machine_code=False), model, model, zoo)


def test_an_edited_header_is_refused(saved, tmp_path):
    zoo, model, path = saved
    edited = _rewritten(path, tmp_path / "edited.npz", _swap_two_constants)
    for machine_code in (True, False):
        with pytest.raises(sb.ModelFileError, match="edited.npz is damaged: its SHA-256 digest over "
                                                     "the whole file does not match"):
            sb.load_model(edited, machine_code=machine_code)
    # the same edit with the digest recomputed loads (the swap is then the file's content):
    # the digest is what refused it
    rehashed = _rewritten(path, tmp_path / "rehashed.npz", _swap_two_constants, rehash=True)
    names = [str(c) for c in sb.load_model(rehashed).constants]
    assert names[:2] == [str(c) for c in model.constants][1::-1]


@pytest.mark.parametrize("damage", ["header name", "blob", "missing digest", "extra member"])
def test_damage_anywhere_is_refused(saved, tmp_path, damage):
    zoo, model, path = saved

    def edit(header, members):
        if damage == "header name":              # a field nothing else checks
            header["name"] = "another"
        elif damage == "blob":
            key = next(k for k in members if k.startswith("blob_"))
            b = members[key].copy()
            b[len(b) // 2] ^= 1
            members[key] = b
        elif damage == "missing digest":
            del members["digest"]
        else:
            members["blob_extra"] = np.zeros(3, np.uint8)

    out = _rewritten(path, tmp_path / "damaged.npz", edit)
    with pytest.raises(sb.ModelFileError, match="damaged.npz is damaged"):
        sb.load_model(out)


def test_another_symbody_version_rebuilds_without_machine_code(saved, tmp_path):
    zoo, model, path = saved

    def older(header, members):
        assert header["format"] == FORMAT
        header["versions"]["symbody"] = "0.0.1"

    out = _rewritten(path, tmp_path / "older.npz", older, rehash=True)
    with pytest.raises(sb.ModelFileError, match="symbody '0.0.1'.*machine_code=False"):
        sb.load_model(out)
    _same_to_round_off(sb.load_model(out, machine_code=False), model, model, zoo)
