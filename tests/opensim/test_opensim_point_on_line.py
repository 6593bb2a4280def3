"""PointOnLineConstraint against OpenSim 4.6 on the bouncing block (a block on a FreeJoint with
a two-link leg; the block's origin and the foot are held on the vertical axis), the 4.x file
of opensim-models, all forces on: the constraint rows (Simbody's two per constraint) and
their velocity rows at states off the constraints; M, q' and u' (OpenSim's with its
multipliers) at states put on them by our projection; OpenSim's own assembly lands on our
constraints; and a run through a heel strike stays on them.  The 3.x file of opensim-core
forms the same equations (the same dependent set here; u' at contact states against OpenSim
in test_opensim_contact.py).  A ball-jointed body on a line needs the ball's later angles
as dependents (q' = N(q) u for them), also checked against OpenSim."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import symbody as sb
from symbody.errors import InputError
from symbody.opensim import OpenSimImportWarning, load_opensim
from systems.opensim_oracle import ask_opensim, opensim_installed, terms_in_our_order

DATA = Path(__file__).resolve().parents[1] / "data" / "opensim"
needs_opensim = pytest.mark.skipif(not opensim_installed(), reason="opensim is not installed")


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.fixture(scope="module", params=["bouncing_block.osim", "bouncing_block_30000.osim"])
def block(request):
    path = DATA / request.param
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpenSimImportWarning)       # nothing is left out
        model = load_opensim(path)
    return path, model


def _on_constraints(model, rng, count: int) -> list:
    """(q, u) at random coordinates (0.3 of their ranges, the block 1.2 m up) with q_dep
    and the dependent speeds put on the constraints by our projection."""
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    k = model.coordinate_names.index("yTranslation")
    out = []
    for _ in range(count):
        q0 = 0.3 * model.random_coordinates(rng)
        q0[k] = 1.2
        q, ok, _ = nm.project_coordinates(q0, p)
        assert ok
        out.append((q, nm.full_speeds(q, rng.uniform(-1, 1, len(model.u_ind)), p)))
    return out


def test_a_free_joint_angle_is_dependent(block):
    """The foot's rows need a tilt of the block: over the translations and the pins their
    Jacobian has rank 3 of 4 at every state on the constraints (the pins move the foot only
    in the leg's plane), so X of the FreeJoint's X-Y-Z angles (whose own speed moves it
    alone: B's column of ω_x is ∂f_h/∂q_x) is the fourth dependent coordinate."""
    _, model = block
    assert [str(q)[2:-3] for q in model.q_dep] == ["xTranslation", "zTranslation", "pin1_rot",
                                                   "xRotation"]
    assert list(model.eom.holonomic_names) == [
        "lock_block_to_y_axis (x)", "lock_block_to_y_axis (y)", "lock_foot_to_y_axis (x)",
        "lock_foot_to_y_axis (y)"]
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    names = list(model.coordinate_names)
    cols = [names.index(n) for n in ("xTranslation", "zTranslation", "pin1_rot", "pin2_rot")]
    dep = [names.index(str(q)[2:-3]) for q in model.q_dep]
    for q, _ in _on_constraints(model, np.random.default_rng(7), 2):
        J = nm.holonomic_jacobian(q, p)
        s = np.linalg.svd(J[:, cols], compute_uv=False)
        assert s[3] < 1e-12 * s[0]
        # the dependent block of B equals that of ∂f_h/∂q, and is regular
        B = nm.velocity_constraint_matrix(q, p)
        assert np.abs(B[:, dep] - J[:, dep]).max() < 1e-14
        assert abs(np.linalg.det(J[:, dep])) > 1e-3


@needs_opensim
@pytest.mark.parametrize("block", ["bouncing_block.osim"], indirect=True)
def test_point_on_line_agrees_with_opensim(block):
    path, model = block
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    n = len(model.coordinates)
    rng = np.random.default_rng(11)
    off = [(model.random_coordinates(rng), rng.uniform(-1, 1, n)) for _ in range(2)]
    on = _on_constraints(model, rng, 3)
    queries = []
    for q, u in off:
        Q, U = model.to_opensim_state(q, u)
        queries += [{"kind": "constraint_errors", "Q": Q.tolist(), "U": U.tolist()},
                    {"kind": "assemble", "Q": Q.tolist()}]
    for q, u in on:
        Q, U = model.to_opensim_state(q, u)
        queries += [{"kind": "terms", "Q": Q.tolist(), "U": U.tolist()},
                    {"kind": "constraint_errors", "Q": Q.tolist(), "U": U.tolist()}]
    answers = ask_opensim(path, queries, without_forces=False)
    for i, (q, u) in enumerate(off):
        errors, assembled = answers[2 * i], answers[2 * i + 1]
        assert _relative(nm.holonomic_residual(q, p), errors["qerr"]) < 1e-12
        assert _relative(nm.velocity_residual(q, u, p), errors["uerr"]) < 1e-12
        qa, _ = model.from_opensim_state(np.array(assembled), np.zeros(n))
        assert np.abs(nm.holonomic_residual(qa, p)).max() < 1e-9
    r = np.zeros(len(model.eom.specifieds))
    for i, (q, u) in enumerate(on):
        terms, errors = answers[4 + 2 * i], answers[5 + 2 * i]
        assert max(np.abs(errors["qerr"]).max(), np.abs(errors["uerr"]).max()) < 1e-12
        ref = terms_in_our_order(model, terms)
        assert _relative(model.mass_matrix(q), ref["M"]) < 1e-9
        assert _relative(nm.qdot(q, u, p, r=r), ref["qdot"]) < 1e-9
        assert _relative(nm.accelerations(q, u, p, r=r)[0], ref["udot"]) < 1e-9


@needs_opensim
@pytest.mark.parametrize("block", ["bouncing_block.osim"], indirect=True)
def test_a_run_through_a_heel_strike_stays_on_the_constraints(block):
    """0.3 s from 1.2 m: the heel strikes the platform (HuntCrossleyForce) at ~0.2 s; every
    output sample is on the constraints to the projection's tolerance (1e-10), positions
    and velocities, and the end state is OpenSim's (its Manager at accuracy 1e-10; here
    2e-10 in q, 2e-9 in u of 8: the bound leaves a margin of 500).  The 4.x file only: the
    3.x one gives the same trajectory to the bit, and OpenSim's Manager takes 10 s on it."""
    path, model = block
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    (q, u), = _on_constraints(model, np.random.default_rng(2), 1)
    x0 = np.concatenate([q, u[:len(model.u_ind)]])          # [q, u_ind]
    sol = sb.simulate(nm, (0.0, 0.3), x0, model.constants,
                      solver=sb.Solver(rtol=1e-9, atol=1e-9))
    assert sol.success
    assert any("foot_contact_force" in e.name for e in sol.events)
    worst_q = max(np.abs(nm.holonomic_residual(qi, p)).max() for qi in sol.q)
    worst_u = max(np.abs(nm.velocity_residual(qi, ui, p)).max() for qi, ui in zip(sol.q, sol.u))
    assert worst_q < 1e-10 and worst_u < 1e-10
    Q, U = model.to_opensim_state(q, u)
    end = ask_opensim(path, [{"kind": "integrate", "Q": Q.tolist(), "U": U.tolist(), "t": 0.3,
                              "accuracy": 1e-10}], without_forces=False)[0]
    q_ref, u_ref = model.from_opensim_state(np.array(end["Q"]), np.array(end["U"]))
    assert np.abs(sol.q[-1] - q_ref).max() < 1e-7
    assert np.abs(sol.u[-1] - u_ref).max() < 1e-6 * np.abs(u_ref).max()


@needs_opensim
def test_an_offset_frame_socket_is_read_as_opensim_does(tmp_path):
    """OpenSim 4.6 hands Simbody a socket's body and the vectors as written, also when the
    socket names an offset frame (its translation is not applied); so do we."""
    text = (DATA / "bouncing_block.osim").read_text()
    socket = "<socket_follower_body>/bodyset/link2</socket_follower_body>"
    assert text.count(socket) == 1
    path = tmp_path / "offset_follower.osim"
    path.write_text(text.replace(socket, socket.replace("link2<", "link2/link2_geom_frame_1<")))
    model = load_opensim(path)
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(5)
    n = len(model.coordinates)
    states = [(model.random_coordinates(rng), rng.uniform(-1, 1, n)) for _ in range(2)]
    queries = []
    for q, u in states:
        Q, U = model.to_opensim_state(q, u)
        queries.append({"kind": "constraint_errors", "Q": Q.tolist(), "U": U.tolist()})
    for (q, u), errors in zip(states, ask_opensim(path, queries, without_forces=False)):
        assert _relative(nm.holonomic_residual(q, p), errors["qerr"]) < 1e-12
        assert _relative(nm.velocity_residual(q, u, p), errors["uerr"]) < 1e-12


def _ball_on_line(direction: str, copies: int = 1) -> str:
    """A body on a BallJoint at the origin (centre of mass off its axes) whose point
    (1, 0, 0) is held on a line through the origin along ``direction`` (``copies`` times)."""
    coords = "".join(f'<Coordinate name="r{k}"><range>-1 1</range></Coordinate>' for k in "xyz")
    constraint = ('<PointOnLineConstraint name="on_line{}"><socket_line_body>/ground'
                  "</socket_line_body><socket_follower_body>/bodyset/b</socket_follower_body>"
                  f"<line_direction_vec>{direction}</line_direction_vec>"
                  "<point_on_line>0 0 0</point_on_line><point_on_follower>1 0 0"
                  "</point_on_follower></PointOnLineConstraint>")
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">\n'
            '<Model name="m">\n<Ground name="ground"/>\n<BodySet name="bodyset"><objects>'
            '<Body name="b"><mass>1</mass><mass_center>0.5 -0.3 0.2</mass_center>'
            "<inertia>0.1 0.2 0.3 0.01 0 0</inertia></Body></objects></BodySet>\n"
            '<JointSet name="jointset"><objects><BallJoint name="ball">'
            "<socket_parent_frame>/ground</socket_parent_frame><socket_child_frame>/bodyset/b"
            f"</socket_child_frame><coordinates>{coords}</coordinates></BallJoint>"
            "</objects></JointSet>\n"
            '<ConstraintSet name="constraintset"><objects>\n'
            + "".join(constraint.format("" if i == 0 else i + 1) for i in range(copies))
            + "</objects></ConstraintSet>\n</Model>\n</OpenSimDocument>\n")


@needs_opensim
def test_later_ball_angles_as_dependents_agree_with_opensim(tmp_path):
    """Holding (1, 0, 0) of a ball-jointed body on the line along (1, 1, 1) fixes the ball's
    Y and Z angles (X turns the body about the line only at X-Y-Z angles where the line is
    the x axis): no paired coordinate can be dependent, so Y and Z are, with their own
    speeds ω_y, ω_z (B's columns J N(q), regular at the default configuration), though
    their rates take ω_x too.  u' and q' at projected states, and a 1 s run (on the
    constraints to 1e-10, at OpenSim's end state) agree with OpenSim 4.6; Kane's method on
    model.system gives the same u'."""
    path = tmp_path / "ball_on_line.osim"
    path.write_text(_ball_on_line("1 1 1"))
    model = load_opensim(path)
    assert [str(q)[2:-3] for q in model.q_dep] == ["ry", "rz"]
    nm = model.numeric_model
    p = nm.constants_array(model.constants)
    rng = np.random.default_rng(0)
    states = []
    for _ in range(3):
        q, ok, _ = nm.project_coordinates(model.random_coordinates(rng), p)
        assert ok
        states.append((q, nm.full_speeds(q, rng.uniform(-1, 1, len(model.u_ind)), p)))
    q, u = states[0]
    sol = sb.simulate(nm, (0.0, 1.0), np.concatenate([q, u[:len(model.u_ind)]]),
                      model.constants, solver=sb.Solver(rtol=1e-10, atol=1e-10))
    assert sol.success
    assert max(np.abs(nm.holonomic_residual(qi, p)).max() for qi in sol.q) < 1e-10
    assert max(np.abs(nm.velocity_residual(qi, ui, p)).max()
               for qi, ui in zip(sol.q, sol.u)) < 1e-10
    queries = []
    for qi, ui in states:
        Q, U = model.to_opensim_state(qi, ui)
        queries.append({"kind": "terms", "Q": Q.tolist(), "U": U.tolist()})
    Q, U = model.to_opensim_state(q, u)
    queries.append({"kind": "integrate", "Q": Q.tolist(), "U": U.tolist(), "t": 1.0,
                    "accuracy": 1e-10})
    *answers, end = ask_opensim(path, queries)
    for (qi, ui), terms in zip(states, answers):
        ref = terms_in_our_order(model, terms)
        assert abs(qi[1]) > 0.1 and abs(qi[2]) > 0.1          # q' = N(q) u is not u here
        assert _relative(nm.qdot(qi, ui, p), ref["qdot"]) < 1e-9
        assert _relative(nm.accelerations(qi, ui, p)[0], ref["udot"]) < 1e-9
    q_ref, u_ref = model.from_opensim_state(np.array(end["Q"]), np.array(end["U"]))
    assert np.abs(sol.q[-1] - q_ref).max() < 1e-6
    assert np.abs(sol.u[-1] - u_ref).max() < 1e-6 * np.abs(u_ref).max()
    # model.system carries the constraint: SymPy's vector algebra (Kane's method on the
    # System, the same dependent set) gives the same u'
    kane = sb.compile(model.system_eom(), constants=list(model.constants))
    pk = kane.constants_array(model.constants)
    for qi, ui in states:
        assert _relative(kane.accelerations(qi, ui, pk)[0], nm.accelerations(qi, ui, p)[0]) \
            < 1e-12


def test_redundant_rows_and_a_line_without_direction_are_refused():
    """The same PointOnLineConstraint twice: four rows of rank two, refused naming them; a
    zero line direction: an error at the constraint's line."""
    with pytest.raises(InputError, match=r"on_line \(x\), on_line \(y\), on_line2 \(x\), "
                                         r"on_line2 \(y\) are redundant at the default "
                                         "configuration"):
        load_opensim(_ball_on_line("1 1 1", copies=2))
    xml = _ball_on_line("0 0 0")
    line = xml[:xml.index("<PointOnLine")].count("\n") + 1
    with pytest.raises(InputError, match=rf"on_line.*line {line}.*<line_direction_vec> "
                                         r"\[0.0, 0.0, 0.0\] has no direction"):
        load_opensim(xml)
