"""Arm26 with all six muscles against OpenSim 4.6: TRIlong's path over three wrap objects
(the cylinders 'TRI' and 'TRIlongglen', the ellipsoid 'TRIlonghh'; OpenSim's passes run in C
and place the path's stations at run time, :mod:`symbody.opensim.forces.multi_wrap`).  At
states with the shoulder where TRIlong wraps over the glenoid and the humeral head and where
it does not, q', u', the activations' and fiber lengths' derivatives agree to 1e-9.  Two
cylinders on a two-point path across a joint, as Rajagopal 2016's gastrocnemii (the condyles
on the femur, the shank on the tibia, a quadrant): Arm26 with BRA over its cylinder 'TRI'
and a new one on the ulna (quadrant -y), built on both sides, lengths, moment arms and
derivatives.  A path over several objects among which a WrapSphere is refused by name."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import (
    ask_opensim,
    muscle_derivative_errors,
    muscle_derivative_queries,
    opensim_installed,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


@pytest.fixture(scope="module")
def arm26():
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)
        model = load_opensim(DATA / "arm26.osim")
    assert not model.left_out and len(model.muscle_names) == 6
    return model


@needs_opensim
def test_full_arm26_derivatives_agree_with_opensim(arm26):
    model = arm26
    rng = np.random.default_rng(7)
    shoulder = [{0: v} for v in (0.2, 1.9, 2.3, 1.0)]
    queries, states = muscle_derivative_queries(model, rng, 4, shoulder)
    on = [model.path_parameters.multi_wrap_paths(q)["TRIlong"][1] for q, _u, _e in states]
    assert any("TRIlonghh" in x and "TRIlongglen" in x for x in on)
    assert any("TRIlongglen" not in x for x in on)
    answers = ask_opensim(DATA / "arm26.osim", queries, without_forces=False)
    worst = muscle_derivative_errors(model, states, answers)
    assert max(worst.values()) <= 1e-9, worst


def test_a_sphere_among_several_wrap_objects_is_refused_by_name(tmp_path):
    text = (DATA / "arm26.osim").read_text()
    i = text.index('<WrapCylinder name="TRIlongglen">')
    j = text.index("</WrapCylinder>", i)
    block = text[i:j + len("</WrapCylinder>")].replace("WrapCylinder", "WrapSphere")
    path = tmp_path / "arm26_sphere.osim"
    path.write_text(text[:i] + block + text[j + len("</WrapCylinder>"):])
    with pytest.warns(OpenSimImportWarning, match=r"TRIlong.*WrapSphere 'TRIlongglen'"):
        model = load_opensim(path)
    assert [x.name for x in model.left_out] == ["TRIlong"]


def _two_cylinder_variant(out: Path) -> Path:
    """Arm26 with BRA (two points, humerus -> ulna) over 'TRI' and a new cylinder 'ULNA' on
    the ulna (radius 0.01, quadrant -y, 1 cm off the elbow's centre, TRI's orientation)."""
    text = (DATA / "arm26.osim").read_text()
    i = text.index('<WrapCylinder name="TRI">')
    j = text.index("</WrapCylinder>", i) + len("</WrapCylinder>")
    cyl = text[i:j].replace('name="TRI"', 'name="ULNA"').replace(
        "<quadrant>all</quadrant>", "<quadrant>-y</quadrant>").replace(
        "<radius>0.016</radius>", "<radius>0.01</radius>")
    cyl = re.sub(r"<translation>.*?</translation>", "<translation>0.01 0.01 0</translation>",
                 cyl)
    cyl = re.sub(r"<xyz_body_rotation>.*?</xyz_body_rotation>",
                 "<xyz_body_rotation>-0.14 0 0.15</xyz_body_rotation>", cyl)
    b = text.index('<Body name="r_ulna_radius_hand">')
    k = text.index("<objects />", text.index("<WrapObjectSet", b))
    text = text[:k] + f"<objects>{cyl}</objects>" + text[k + len("<objects />"):]
    k = text.index("</PathWrap>", text.index('<Thelen2003Muscle name="BRA">')) + len("</PathWrap>")
    text = (text[:k] + '<PathWrap name="ulna"><wrap_object>ULNA</wrap_object>'
            "<method>hybrid</method><range>-1 -1</range></PathWrap>" + text[k:])
    out.write_text(text)
    return out


@needs_opensim
def test_two_cylinders_on_a_two_point_path_agree_with_opensim(tmp_path):
    path = _two_cylinder_variant(tmp_path / "arm26_two_cylinders.osim")
    model = load_opensim(path)
    assert model.forces["BRA"].path.wraps == ("TRI", "ULNA") and not model.left_out
    rng = np.random.default_rng(11)
    qs = np.array([model.random_coordinates(rng) for _ in range(16)])
    on = [model.path_parameters.multi_wrap_paths(q)["BRA"][1] for q in qs]
    assert sum(x == ("ULNA", "TRI") for x in on) >= 4 and sum(not x for x in on) >= 4
    queries = [{"kind": "muscles", "Q": model.to_opensim_state(q)[0].tolist(),
                "names": list(model.muscle_names), "coordinates": list(model.coordinate_names)}
               for q in qs]
    derivative_queries, states = muscle_derivative_queries(model, rng, 3,
                                                           [{1: 0.05}, {1: 0.3}, {1: 1.3}])
    answers = ask_opensim(path, queries + derivative_queries, without_forces=False)
    L, A = model.musculotendon_lengths(qs), model.moment_arms(qs)
    for k, ans in enumerate(answers[:len(qs)]):
        np.testing.assert_allclose(L[k], ans["lengths"], rtol=1e-9, atol=0)
        A_os = np.array(ans["moment_arms"])
        assert np.abs(A[k] - A_os).max() <= 1e-9 * np.abs(A_os).max()
    on = [model.path_parameters.multi_wrap_paths(q)["BRA"][1] for q, _u, _e in states]
    assert on[0] == on[1] == ("ULNA", "TRI") and on[2] == ()
    worst = muscle_derivative_errors(model, states, answers[len(qs):])
    assert max(worst.values()) <= 1e-9, worst


@needs_opensim
def test_full_arm26_as_degroote_muscles_agrees_with_opensim(tmp_path):
    """Arm26's six muscles as rigid-tendon DeGrooteFregly2016Muscles (OpenSim's
    replaceMuscles), whose force takes the path's lengthening speed: over TRIlong's three
    objects OpenSim's speed counts the segments between two points of one body that its
    forces skip (``speed_jacobian``; the force row instead changes u' by > 1e-6 here)."""
    out = tmp_path / "arm26_degroote.osim"
    ask_opensim(DATA / "arm26.osim", [{"kind": "degroote_model", "out": str(out)}])
    model = load_opensim(out)
    names = list(model.muscle_names)
    assert len(names) == 6 and not model.left_out
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n, k = len(model.coordinates), len(names)
    rng = np.random.default_rng(5)
    queries, states = [], []
    for shoulder in (1.9, 0.3):           # TRIlong over the glenoid and the humeral head
        q, u = model.random_coordinates(rng), rng.uniform(-2, 2, n)
        q[0] = shoulder
        a, e = rng.uniform(0.05, 1, k), rng.uniform(0, 1, k)
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "derivatives", "Q": Q.tolist(), "U": U.tolist(),
                        "activations": dict(zip(names, a.tolist())),
                        "excitations": dict(zip(names, e.tolist()))})
        states.append((np.concatenate([q, u, a]), e))
    assert "TRIlonghh" in model.path_parameters.multi_wrap_paths(states[0][0][:n])["TRIlong"][1]
    answers = ask_opensim(out, queries, without_forces=False)
    perm = list(model.simbody_index)
    for (x, e), ans in zip(states, answers):
        xdot = nm.rhs(0.0, x, p, model.specified_values(x[:n], e))
        udot = np.array(ans["udot"])[perm]
        adot = np.array([ans["adot"][m] for m in names])
        assert np.abs(xdot[n:2 * n] - udot).max() <= 1e-9 * np.abs(udot).max()
        assert np.abs(xdot[2 * n:] - adot).max() <= 1e-9 * np.abs(adot).max()


def test_the_memo_and_the_cycle_jump_change_no_bit(arm26):
    """Within one evaluation a wrap object's repeated wrapLine calls (bitwise-identical end
    points) return stored results, and a cylinder's tangency iteration that repeats a state
    jumps to its limit's state: lengths, path nodes and body wrenches at 40 random states are
    bitwise those of the same C routine without either (OpenSim's plain loops)."""
    from symbody.compilation.python_extension import PythonExtension
    from symbody.opensim.forces import multi_wrap

    name = "symbody_multi_wrap_nomemo"
    jump = "if (jump_cycle(seen, iterations, r1, r2)) { iterations = CYL_MAX_ITERATIONS; continue; }"
    lookup = "for (int k = 0; k < n && !hit; k++) {"      # (the cylinders' batched calls)
    assert multi_wrap._SOURCE.count(jump) == 1 and "memo_wrap_line(wj," in multi_wrap._SOURCE
    assert multi_wrap._SOURCE.count(lookup) == 1
    source = (multi_wrap._SOURCE.replace("memo_wrap_line(wj,", "wrap_line(wj,").replace(jump, "")
              .replace(lookup, "for (int k = 0; k < 0; k++) {"))
    plain = PythonExtension(name, source.replace("symbody_multi_wrap", name), "multi-wrap-nomemo",
                            opt="-O2 -ffp-contract=off").module()
    nodes = _bitwise_equal_paths(arm26, plain, 3)
    assert sum(len(k) > len(arm26.path_parameters._multi[0].point_bodies) for k in nodes) >= 10


def _bitwise_equal_paths(model, other, seed: int) -> list:
    """TRIlong's path (length, nodes, wrenches) from the module as built and from ``other``
    at 40 random states, asserted bitwise equal; the nodes at each state."""
    from symbody.opensim.forces import multi_wrap

    pp = model.path_parameters
    pw = pp._multi[0]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(40):
        q = np.asarray(model.random_coordinates(rng), dtype=float)
        x = [float(v) for v in np.asarray(pp._multi_inputs(q[:pp.nq]), dtype=float).ravel()]
        args = (x[:pw.npoints], pw.point_bodies, x[pw.npoints:], pw._spec)
        ours, ref = multi_wrap._module().path(*args), other.path(*args)
        assert ours[2] == ref[2]
        assert np.array(ours[1:2] + ours[3]).tobytes() == np.array(ref[1:2] + ref[3]).tobytes()
        out.append(ours[2])
    return out


def test_the_faster_wrap_routines_change_no_bit(arm26):
    """The path routine as built now (the ellipsoid's fan vectorized, the cylinder's axis
    direction not normalized again, its angle comparison without acos where sure, the pass
    that repeats the first skipped, the flags ``WRAP_C_FLAGS``) and over the frozen
    ellipsoid, cylinder and path routines before that (tests/data/opensim/*_reference.c, the
    flags then): lengths, path nodes and body wrenches at 40 random states are bitwise
    equal."""
    from symbody.opensim.forces import multi_wrap
    from systems.wrap_calls import frozen_build

    here = Path(multi_wrap.__file__).parent
    assert multi_wrap._SOURCE.endswith((here / "path_parameters.c").read_text())
    frozen = frozen_build()
    nodes = _bitwise_equal_paths(arm26, frozen, 5)
    assert sum(any(k in (-3, -4) for k in n) for n in nodes) >= 5    # (TRIlonghh: PathWrap 2)
