"""Kane's method: symbody's own implementation with sympy's KanesMethod API.

Kane's equations for o speeds (p independent, m dependent) and s auxiliary speeds::

    Fr + Fr* = 0,   Fr = sum_i v_r^{P_i} . R_i + w_r^{B_i} . T_i,
    Fr* = -sum_i (m_i a_i . v_r^{P_i} + (I_i alpha_i + w_i x I_i w_i) . w_r^{B_i})

are formed for every speed as if all were independent (the "unreduced" form
``M_d u' + g_d = 0`` of the canonical EquationsOfMotion), in symengine, by
extracting linear coefficients rather than differentiating with respect to
time.  The reduced (constrained) sympy-compatible attributes ``mass_matrix``,
``forcing``, ``fr``/``frstar`` apply ``A = -B_dep^{-1} B_ind`` symbolically, as
SymPy does, but only when they are asked for; ``to_eom()`` never does.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sympy as sm
from sympy.physics.mechanics import Particle, RigidBody
from sympy.physics.vector import ReferenceFrame
from sympy.utilities.iterables import iterable

from .._lazy_modules import lazy_module
from ..compat.sympy import TIME, add_from_args, mul_from_args
from ..errors import FormulationError, NonlinearityError, SingularConstraintError
from ..progress import as_progress
from ..symengine_bridge import SympyConverter
from ._linear_equations import (
    as_column,
    coordinate_and_speed_lists,
    linear_coefficients,
    solve_linear,
)
from ._method_attributes import MethodAttributes
from ._symengine_kinematics import ChainRule, SymbolMap
from .body_inertias import body_inertias
from .contact_record import contact_records, records_of_loads, with_impact_states, with_placeholders
from .eom import CanonicalBlocks, EquationsOfMotion, SymengineDynamics
from .linearization_data import KaneLinearizationData

if TYPE_CHECKING:
    from .linearizer import Linearizer

se = lazy_module("symengine")        # imported when first used (import time)

t = TIME

__all__ = ["KanesMethod"]


def _solver(name, what):
    if callable(name):
        return lambda A, B: name(A, B)
    if name in (None, "LU"):
        return lambda A, B: solve_linear(A, B, what)
    if isinstance(name, str):
        return lambda A, B: A.solve(B, method=name)
    raise FormulationError(f"unknown linear solver {name!r} for {what}")


class KanesMethod(MethodAttributes):
    """Kane's method for constrained multibody systems (sympy-compatible API).

    Parameters are those of ``sympy.physics.mechanics.KanesMethod``: the inertial
    ``frame``, independent coordinates ``q_ind`` and speeds ``u_ind``, kinematic
    differential equations ``kd_eqs`` (expressions = 0, linear in q' and u),
    ``q_dependent`` with ``configuration_constraints`` f_h(q, t) = 0,
    ``u_dependent`` with ``velocity_constraints`` (linear in u; for holonomic
    systems the time derivative of f_h), optional ``acceleration_constraints``,
    ``u_auxiliary`` speeds that bring noncontributing forces into evidence,
    ``bodies`` and ``forcelist`` (loads), ``explicit_kinematics``,
    ``kd_eqs_solver`` and ``constraint_solver``.

    Beyond SymPy: ``configuration_constraints`` may hold more equations than
    ``q_dependent`` (redundant loop closures, e.g. Bricard's linkage), as a list or a dict
    ``{name: expression}`` naming them; the velocity constraints are then the derivatives
    of all of them, the holonomic ones first and in their order, followed by the
    nonholonomic ones.  ``compile`` returns a ``RedundantModel`` and ``simulate`` names the
    redundant equations (``symbody.RedundantConstraintWarning``) and runs with an
    independent subset (docs/guides/hard_mechanisms.md).
    """

    # 15 parameters: exactly the signature of sympy.physics.mechanics.KanesMethod (drop-in use)
    def __init__(self, frame: ReferenceFrame, q_ind: Sequence, u_ind: Sequence,
                 kd_eqs: Sequence | None = None, q_dependent: Sequence | None = None,
                 configuration_constraints: Sequence | None = None, u_dependent: Sequence | None = None,
                 velocity_constraints: Sequence | None = None,
                 acceleration_constraints: Sequence | None = None,
                 u_auxiliary: Sequence | None = None, bodies: Sequence | None = None,
                 forcelist: Sequence | None = None, explicit_kinematics: bool = True,
                 kd_eqs_solver: str | Callable = "LU", constraint_solver: str | Callable = "LU") -> None:
        if not isinstance(frame, ReferenceFrame):
            raise TypeError(f"KanesMethod needs an inertial ReferenceFrame as first argument, got {frame!r}")
        self._inertial = frame
        self._se = None             # the symengine sums (Fr, MM, nonMM) once formed
        self._sympy_forms = None    # the SymPy forms, built on first access
        self._forcelist = forcelist
        self._bodies = bodies
        self.explicit_kinematics = explicit_kinematics
        self._kd_eqs_solver = kd_eqs_solver
        self._constraint_solver = constraint_solver

        q_ind, q_dep, u_ind, u_dep, u_aux = coordinate_and_speed_lists(
            q_ind, q_dependent, u_ind, u_dependent, u_auxiliary,
            ("q_ind", "q_dependent", "u_ind", "u_dependent", "u_auxiliary"))
        qs, us = q_ind + q_dep, u_ind + u_dep
        self._qind, self._qdep = sm.Matrix(q_ind), sm.Matrix(q_dep)
        self._uind, self._udep = sm.Matrix(u_ind), sm.Matrix(u_dep)
        self._uaux = sm.Matrix(u_aux)
        self._q = sm.Matrix(qs)
        self._u = sm.Matrix(us)
        self._qdot = _time_derivatives(qs)
        self._udot = _time_derivatives(us)

        self._smap = SymbolMap()
        self._conv = None
        self._initialize_kindiffeq_matrices(kd_eqs)
        self._initialize_constraint_matrices(configuration_constraints, velocity_constraints,
                                             acceleration_constraints)
        self._Ars_cache = None
        self._Ars_se_cache = None
        self._unreduced = None

    # ------------------------------------------------------------ kinematics
    def _initialize_kindiffeq_matrices(self, kdeqs):
        q, u = list(self._q), list(self._u)
        if kdeqs is None or len(kdeqs) == 0:
            self._qdot_u_map = None
            self._f_k_implicit = self._f_k = sm.Matrix()
            self._k_ku_implicit = self._k_ku = sm.Matrix()
            self._k_kqdot_implicit = self._k_kqdot = sm.Matrix()
            return
        kd = as_column(kdeqs, "kd_eqs")
        if kd.rows != len(q):
            raise FormulationError(
                f"there are {len(q)} coordinates but {kd.rows} kinematic differential equations "
                "(kd_eqs); there must be one per coordinate")
        qdot = list(self._qdot)
        uaux_zero = dict.fromkeys(self._uaux, 0)
        k_kqdot, rest = linear_coefficients(kd, qdot, "kd_eqs", "q'")
        k_ku, f_k = linear_coefficients(rest, u, "kd_eqs", "speed")
        for i in range(kd.rows):
            e = f_k[i]
            for d in e.atoms(sm.Derivative):
                if d.expr in set(q) or d.expr in set(u):
                    raise NonlinearityError(f"kd_eqs[{i}] = {kd[i]} contains {d}, which is neither a "
                                            "coordinate derivative nor allowed; kd_eqs must be linear "
                                            "in q' and u")
        if not any(k_kqdot[i, j] != 0 for i in range(k_kqdot.rows) for j in range(k_kqdot.cols)):
            raise FormulationError("kd_eqs contain no time derivative of any coordinate")
        for j, qd in enumerate(qdot):
            if all(k_kqdot[i, j] == 0 for i in range(k_kqdot.rows)):
                raise FormulationError(f"no kinematic differential equation contains {qd}; each "
                                       "coordinate's derivative must appear in kd_eqs")
        self._f_k_implicit = f_k.xreplace(uaux_zero)
        self._k_ku_implicit = k_ku.xreplace(uaux_zero)
        self._k_kqdot_implicit = k_kqdot
        solve = _solver(self._kd_eqs_solver, "kd_eqs (solving for q')")
        f_k_explicit = solve(k_kqdot, f_k)
        k_ku_explicit = solve(k_kqdot, k_ku)
        self._qdot_u_map = dict(zip(qdot, -(k_ku_explicit * self._u + f_k_explicit)))
        self._f_k = f_k_explicit.xreplace(uaux_zero)
        self._k_ku = k_ku_explicit.xreplace(uaux_zero)
        self._k_kqdot = sm.eye(len(qdot))

    # ----------------------------------------------------------- constraints
    def _initialize_constraint_matrices(self, config, vel, acc):
        m = len(self._udep)
        # {name: expression} names the equations (in warnings and errors); a list: by index
        if isinstance(config, Mapping):
            self._f_h_names = tuple(str(k) for k in config)
            config = list(config.values())
        else:
            self._f_h_names = None
        config = as_column(config, "configuration_constraints")
        if self._f_h_names is None:
            self._f_h_names = tuple(f"configuration_constraints[{i}]" for i in range(config.rows))
        if config.rows < len(self._qdep):
            raise FormulationError(
                f"there are {len(self._qdep)} dependent coordinates but only {config.rows} "
                "configuration constraints; give (at least) one per dependent coordinate")
        # more equations than dependent coordinates: redundant ones (a closed loop whose closure
        # equations are dependent, as in Bricard's mechanism); compile/simulate name them at the
        # assembled configuration and simulate with an independent subset
        excess = config.rows - len(self._qdep)
        for i, e in enumerate(config):
            bad = [d for d in e.atoms(sm.Derivative)] + [x for x in self._u if e.has(x)]
            if bad:
                raise FormulationError(f"configuration_constraints[{i}] = {e} depends on {bad[0]}; "
                                       "configuration constraints may depend only on q and t")
        self._f_h = config
        vel = as_column(vel, "velocity_constraints")
        acc = as_column(acc, "acceleration_constraints")
        if vel.rows < m or (vel.rows - m != excess and (m or vel.rows)):
            raise FormulationError(
                f"there are {m} dependent speeds but {vel.rows} velocity constraints; give one per "
                "dependent speed" if not excess else
                f"there are {m} dependent speeds and {excess} redundant configuration "
                f"constraint{'s' if excess > 1 else ''} ({config.rows} for {len(self._qdep)} "
                f"dependent coordinates), so {m + excess} velocity constraints are needed: one per "
                "dependent speed plus the derivatives of the redundant ones (the holonomic ones "
                f"first, in their order); got {vel.rows}")
        if acc.rows and acc.rows != vel.rows:
            raise FormulationError(
                f"there are {vel.rows} velocity constraints but {acc.rows} acceleration "
                "constraints; give one per velocity constraint")
        if vel.rows:
            if self._qdot_u_map is not None:
                vel = vel.xreplace(self._qdot_u_map)
            k_nh, f_nh = linear_coefficients(vel, list(self._u), "velocity_constraints", "speed")
            if len(self._uaux):
                # auxiliary speeds are zero in the motion; their coefficients make the
                # dependent speeds follow a virtual auxiliary motion (see _aux_reduction)
                k_aux, f_nh = linear_coefficients(f_nh, list(self._uaux), "velocity_constraints",
                                                  "auxiliary speed")
            else:
                k_aux = sm.zeros(m, 0)
            self._k_nh, self._f_nh, self._k_nh_aux = k_nh, f_nh, k_aux
            if not acc.rows:
                self._f_dnh = self._differentiated_constraints(k_nh, f_nh)
                self._k_dnh = k_nh
            else:
                if self._qdot_u_map is not None:
                    acc = acc.xreplace(self._qdot_u_map)
                self._k_dnh, self._f_dnh = linear_coefficients(acc, list(self._udot),
                                                               "acceleration_constraints", "u'")
            self._check_dependent_block()
        else:
            self._f_nh = sm.Matrix()
            self._k_nh = sm.Matrix()
            self._k_nh_aux = sm.Matrix()
            self._f_dnh = sm.Matrix()
            self._k_dnh = sm.Matrix()

    def _differentiated_constraints(self, k_nh, f_nh) -> sm.Matrix:
        """f_dnh = (d/dt B) u + d/dt b, by the chain rule over q (q' from the kinematics)
        and over specified functions of time r(t) (d/dt r = r'): the one chain rule of the
        formulation (:class:`ChainRule`, also used for the accelerations in Kane's sums).

        Only functions of other arguments, or derivatives of the coordinates and speeds,
        which the chain rule does not know, are left to SymPy's differentiation."""
        variables = set(self._q) | set(self._u) | set(self._uaux)
        foreign = False
        for e in list(k_nh) + list(f_nh):
            foreign = foreign or any(f.args != (t,) for f in e.atoms(sm.core.function.AppliedUndef))
            foreign = foreign or any(set(d.variables) != {t} or d.expr in variables
                                     for d in e.atoms(sm.Derivative))
        if foreign or self._qdot_u_map is None:
            f_dnh = k_nh.diff(t) * self._u + f_nh.diff(t)
            if self._qdot_u_map is not None:
                f_dnh = f_dnh.xreplace(self._qdot_u_map)
            return f_dnh
        smap = self._smap
        q_se = [smap.add(x) for x in self._q]
        u_se = [smap.add(x) for x in self._u]
        ua_se = [smap.add(x) for x in self._uaux]
        qdot_se = [smap.to_se(self._qdot_u_map[qd].xreplace(dict.fromkeys(self._uaux, 0)))
                   for qd in self._qdot]
        chain = ChainRule(q_se, qdot_se, se.Symbol(str(t)), symmap=smap, speeds=u_se + ua_se)
        conv = self._converter()
        out = []
        for i in range(k_nh.rows):
            c = smap.to_se(f_nh[i])
            for j in range(k_nh.cols):
                if k_nh[i, j] != 0:
                    c = c + smap.to_se(k_nh[i, j]) * u_se[j]
            out.append(conv(chain.dt_rest(c)))
        return sm.Matrix(len(out), 1, out)

    def _check_dependent_block(self):
        p = len(self._u) - len(self._udep)
        Bdep = self._k_nh[:, p:]
        for j, ud in enumerate(self._udep):
            if all(Bdep[i, j] == 0 for i in range(Bdep.rows)):
                raise SingularConstraintError(
                    f"dependent speed {ud} appears in none of the velocity constraints, so they "
                    "cannot determine it; choose dependent speeds that the constraints contain")
        # numeric rank test at random configurations: deterministic (symbols in name order,
        # not in hash order), and singular only when singular at each of three configurations
        # (a generic rank loss persists everywhere; one unlucky point does not count)
        syms = set()
        for e in Bdep:
            syms |= e.free_symbols
            syms |= {f for f in e.atoms(sm.core.function.AppliedUndef)}
        syms.discard(t)
        ordered = sorted(syms, key=sm.default_sort_key)
        rng = random.Random(1)
        ok = False
        for _ in range(3):
            vals = {s: sm.Float(rng.uniform(0.3, 1.3)) for s in ordered}
            vals[t] = sm.Float(0.37)
            try:
                import numpy as np
                num = np.array([[complex(sm.N(e.xreplace(vals))) for e in row] for row in Bdep.tolist()])
                num = num.real
                sv = np.linalg.svd(num, compute_uv=False)
            except (TypeError, ValueError):
                return
            if sv.size and sv[-1] > 1e-10 * max(sv[0], 1.0):
                ok = True
                if num.shape[0] > num.shape[1]:
                    # redundant rows: the reduced SymPy forms use m rows independent here
                    from scipy.linalg import qr
                    piv = qr(num.T, mode="economic", pivoting=True)[2]
                    self._square_rows = tuple(sorted(int(i) for i in piv[:num.shape[1]]))
                break
        if not ok:
            raise SingularConstraintError(
                "the velocity constraints' Jacobian with respect to the dependent speeds "
                f"{[str(x) for x in self._udep]} is singular at a generic configuration; the chosen "
                "dependent speeds cannot be solved for (pick another set or remove a redundant constraint)")

    @property
    def _Ars(self):
        """A = -B_dep^{-1} B_ind, symbolic; computed only when a reduced form is requested."""
        if self._Ars_cache is None:
            if not len(self._udep):
                self._Ars_cache = sm.Matrix()
            else:
                p = len(self._u) - len(self._udep)
                if self._constraint_solver in (None, "LU"):
                    A = self._Ars_se()
                    self._Ars_cache = self._converter().matrix(
                        [[A[i, j] for j in range(A.cols)] for i in range(A.rows)])
                else:
                    Bs = self._k_nh.extract(list(self._rows()), list(range(self._k_nh.cols)))
                    B_ind, B_dep = Bs[:, :p], Bs[:, p:]
                    solve = _solver(self._constraint_solver, "velocity constraints (dependent speeds)")
                    self._Ars_cache = -solve(B_dep, B_ind)
        return self._Ars_cache

    # --------------------------------------------------------- Kane's method
    def kanes_equations(self, bodies: Sequence | None = None, loads: Sequence | None = None, *,
                        progress: Any = None) -> KaneEquations:
        """Form Kane's equations Fr + Fr* = 0; return ``(Fr, Fr*)``.

        With m motion constraints and s auxiliary speeds the returned columns
        have o - m + s rows (reduced equations, then the auxiliary ones), as in
        SymPy.  ``bodies`` is an iterable of RigidBody/Particle; ``loads`` of
        (Point, force Vector) / (ReferenceFrame, torque Vector) pairs.
        ``progress``: None (a progress line in a terminal for long formations),
        False, True or a callable ``f(done, total, message)``.
        """
        bodies, loads = _sort_bodies_loads(bodies, loads)
        if bodies is None:
            bodies = self._bodies
        if loads is None and self._forcelist is not None:
            loads = self._forcelist
        if bodies is None:
            raise FormulationError("kanes_equations needs the bodies (RigidBody and Particle objects)")
        if self._qdot_u_map is None:
            raise AttributeError("Create an instance of KanesMethod with kinematic differential "
                                 "equations to use this method.")
        bodies = list(bodies)
        loads = list(loads) if loads else []
        self._bodies = bodies
        self._forcelist = loads if loads else None
        self._se = None
        self._sympy_forms = None
        with as_progress(progress, "forming Kane's equations", total=len(bodies) + 1) as bar:
            self._form_unreduced(bodies, loads, bar)
        return KaneEquations(self._fr_frstar)

    def _form_eoms(self) -> sm.Matrix:
        """Fr + Fr* with the bodies and loads given at construction (``System.form_eoms`` calls this)."""
        fr, frstar = self.kanes_equations(self._bodies, self._forcelist)
        return fr + frstar

    def _form_fr(self, fl: Sequence | None) -> sm.Matrix:
        """Fr, the generalized active forces of the loads ``fl`` alone (SymPy's method of this
        name, which SymPy's tests call): Fr_r = sum_i v_r^{P_i} . R_i + w_r^{B_i} . T_i, reduced
        by A = -B_dep^{-1} B_ind as Fr~ = Fr_ind + A^T Fr_dep with dependent speeds; a column
        of p (independent speeds) rows.  ``fl``: (Point, force) / (ReferenceFrame, torque)
        pairs, or None (no loads).  Unlike SymPy's it leaves the formed equations as they are
        (``kanes_equations`` forms Fr with the loads it is given)."""
        if fl is not None and (isinstance(fl, (str, bytes, Mapping)) or not iterable(fl)
                               or len(list(fl)) == 0):
            raise FormulationError(f"_form_fr: the loads must be a non-empty iterable of (Point or "
                                   f"ReferenceFrame, Vector) pairs or None, got {fl!r}")
        if self._qdot_u_map is None:
            raise AttributeError("Create an instance of KanesMethod with kinematic differential "
                                 "equations to use this method.")
        sums = self._kane_sums()
        o = len(self._u)
        fr = list(sums.active_forces(list(fl) if fl is not None else []))[:o]
        if len(self._udep):
            p = o - len(self._udep)
            A = self._Ars_se()
            fr = [fr[i] + sum((A[j, i] * fr[p + j] for j in range(o - p)), se.Integer(0))
                  for i in range(p)]
        conv = self._converter()
        return sm.Matrix(len(fr), 1, [conv(e) for e in fr])

    def _kane_sums(self):
        """The symengine machinery of Kane's sums (:mod:`._kane_sums`) for this system."""
        from ._frame_vectors import FrameVectors  # loads symengine: not at import
        from ._kane_sums import KaneSums

        smap = self._smap
        q_se = [smap.add(x) for x in self._q]
        u_se = [smap.add(x) for x in self._u]
        ua_se = [smap.add(x) for x in self._uaux]
        t_se = se.Symbol(str(t))
        qdot_map = self._qdot_u_map
        qdot_se = [smap.to_se(qdot_map[qd].xreplace(dict.fromkeys(self._uaux, 0))) for qd in self._qdot]
        chain = ChainRule(q_se, qdot_se, t_se, symmap=smap, speeds=u_se + ua_se)
        fv = FrameVectors(self._inertial, smap, qdot_map, chain)
        uaux_zero = {s: se.Integer(0) for s in ua_se}
        return KaneSums(self._inertial, fv, chain, smap, u_se + ua_se, len(u_se), uaux_zero)

    def _form_unreduced(self, bodies, loads, bar=None):
        """Fr, and Fr* split as MM u' + nonMM, frame by frame (the sums: :mod:`._kane_sums`)."""
        sums = self._kane_sums()
        u_se, ua_se = sums.speeds[:len(self._u)], sums.speeds[len(self._u):]
        Fr = sums.active_forces(loads)
        for idx, body in enumerate(bodies):
            if bar is not None:
                bar.set(idx, f"body {idx + 1}/{len(bodies)}")
            sums.add_body(idx, body)
        MM, nonMM = sums.inertia_forces()
        self._se = {"Fr": Fr, "MM": MM, "nonMM": nonMM, "o": len(u_se), "s": len(ua_se)}
        self._unreduced = None
        self._Ars_se_cache = None

    def _converter(self):
        if getattr(self, "_conv", None) is None:
            self._conv = SympyConverter(self._smap.names)
        return self._conv

    def _unreduced_se(self):
        """(M_d rows, g_d) of the unreduced dynamic block M_d u' + g_d = 0, in symengine."""
        d = self._se
        if d.get("unreduced") is None:
            o = d["o"]
            d["unreduced"] = ([list(row) for row in d["MM"][:o]],
                              [d["nonMM"][r] + _negated(d["Fr"][r]) for r in range(o)])
        return d["unreduced"]

    def _unreduced_sympy(self):
        """(M_d, g_d) of the unreduced dynamic block M_d u' + g_d = 0, as sympy matrices."""
        if self._unreduced is None:
            mass, rest = self._unreduced_se()
            conv = self._converter()
            M_d = conv.matrix(mass) if mass else sm.zeros(0, 0)
            g_d = sm.Matrix(len(rest), 1, [conv(e) for e in rest])
            self._unreduced = (M_d, g_d)
        return self._unreduced

    def _assemble_sympy_forms(self) -> dict:
        """SymPy's reduced forms (Fr, Fr*, k_d, forcing), in symengine; converted per piece on use."""
        d, smap = self._se, self._smap
        o, s_aux = d["o"], d["s"]
        MM, nonMM, Fr = d["MM"], d["nonMM"], d["Fr"]
        ud = [smap.add(x) for x in self._udot]
        frstar = [_negated(sum((MM[r][k] * ud[k] for k in range(o) if MM[r][k] != 0), se.Integer(0))
                           + nonMM[r]) for r in range(o + s_aux)]
        k_d = [list(MM[r]) for r in range(o)]
        neg_f_d = [Fr[r] + _negated(nonMM[r]) for r in range(o)]     # the forcing, -f_d
        fr = list(Fr[:o])
        frs = list(frstar[:o])
        if len(self._udep):
            p = o - len(self._udep)
            A = self._Ars_se()
            m = o - p

            def reduce(col):
                return [col[i] + sum((A[j, i] * col[p + j] for j in range(m)), se.Integer(0))
                        for i in range(p)]
            fr, frs, neg_f_d = reduce(fr), reduce(frs), reduce(neg_f_d)
            k_d = [[k_d[i][c] + sum((A[j, i] * k_d[p + j][c] for j in range(m)), se.Integer(0))
                    for c in range(o)] for i in range(p)]
        return {"se": {"k_d": k_d, "neg_f_d": neg_f_d, "fr": fr, "frs": frs, "frstar": frstar}}

    def _forms(self) -> dict:
        """The reduced forms: symengine under "se", SymPy matrices added as they are asked for."""
        self._require_eqs()
        if self._sympy_forms is None:
            self._sympy_forms = self._assemble_sympy_forms()
        return self._sympy_forms

    def _form(self, key: str) -> sm.Matrix:
        """One SymPy form ("k_d", "forcing_d", "f_d", "fr", "frstar"), converted on first use."""
        forms = self._forms()
        got = forms.get(key)
        if got is not None:
            return got
        d, se_forms, conv = self._se, forms["se"], self._converter()
        o, s_aux = d["o"], d["s"]
        if key == "k_d":
            k_d = se_forms["k_d"]
            got = conv.matrix(k_d) if k_d else sm.zeros(0, o)
        elif key == "forcing_d":
            rows = se_forms["neg_f_d"]
            got = sm.Matrix(len(rows), 1, [conv(e) for e in rows])
        elif key == "fr":
            got = sm.Matrix(len(se_forms["fr"]), 1, [conv(e) for e in se_forms["fr"]])
            if s_aux:
                got = got.col_join(sm.Matrix(s_aux, 1, [conv(e) for e in self._aux_reduction(d["Fr"])]))
        elif key == "frstar":
            if len(self._udep):
                got = sm.Matrix(len(se_forms["frs"]), 1, [conv(e) for e in se_forms["frs"]])
            else:
                got = sm.Matrix(o, 1, [self._negated_inertia_row(conv, d["MM"][r], d["nonMM"][r])
                                       for r in range(o)])
            if s_aux:
                aux = self._aux_reduction(se_forms["frstar"])
                got = got.col_join(sm.Matrix(s_aux, 1, [conv(e) for e in aux]))
        else:
            raise KeyError(key)
        forms[key] = got
        return got

    def _fr_frstar(self) -> tuple:
        """(Fr, Fr*) as SymPy matrices (what :class:`KaneEquations` shows)."""
        return self._fr, self._frstar

    @property
    def _fr(self):
        return self._form("fr") if self._se is not None else None

    @property
    def _frstar(self):
        return self._form("frstar") if self._se is not None else None

    @property
    def _k_d(self):
        return self._form("k_d")

    @property
    def _aux_eq(self):
        """Fr + Fr* of the auxiliary speeds (only these rows are converted to SymPy)."""
        self._require_eqs()
        if getattr(self, "_aux_cache", None) is None or self._aux_cache[0] is not self._se:
            d = self._se
            o, s_aux = d["o"], d["s"]
            if not s_aux:
                aux = sm.Matrix()
            else:
                conv = self._converter()
                ud = [self._smap.add(x) for x in self._udot]
                rows = []
                for r in range(o + s_aux):
                    inertia = sum((d["MM"][r][k] * ud[k] for k in range(o) if d["MM"][r][k] != 0),
                                  se.Integer(0)) + d["nonMM"][r]
                    rows.append(d["Fr"][r] + _negated(inertia))
                aux = sm.Matrix(s_aux, 1, [conv(e) for e in self._aux_reduction(rows)])
            self._aux_cache = (self._se, aux)
        return self._aux_cache[1]

    def _negated_inertia_row(self, conv, mm_row, non_mm):
        """-(sum_k MM_rk u_k' + nonMM_r) as sympy, built without re-flattening the sums."""
        udot = list(self._udot)
        terms = []
        for k, c in enumerate(mm_row):
            if c == 0:
                continue
            cs = conv(c)
            if cs.is_Add:
                terms.append(mul_from_args(sorted([cs, udot[k]], key=conv.key)))
            else:
                terms.append(cs * udot[k])
        nm = conv(non_mm)
        if nm.is_Add:
            terms.extend(nm.args)
        elif nm != 0:
            terms.append(nm)
        if not terms:
            return sm.S.Zero
        if len(terms) == 1:
            return -terms[0]
        try:
            terms.sort(key=conv.key)
        except TypeError:
            return -sm.Add(*terms)
        return sm.Mul(sm.S.NegativeOne, add_from_args(terms), evaluate=False)

    def _aux_reduction(self, rows: list) -> list:
        """Rows of the auxiliary speeds with the dependent speeds' rows folded in.

        When the velocity constraints contain auxiliary speeds (B u + B_aux u_aux + b = 0),
        a virtual auxiliary motion moves the dependent speeds by A_aux = -B_dep^-1 B_aux,
        so row_aux + A_aux^T row_dep is the auxiliary equation (as SymPy forms it).
        ``rows``: the o + s unreduced rows (symengine); returns the s auxiliary ones.
        """
        o = len(self._u)
        aux = list(rows[o:])
        K = self._k_nh_aux
        if not len(self._udep) or not any(e != 0 for e in K):
            return aux
        if getattr(self, "_Aaux_se_cache", None) is None:
            p = o - len(self._udep)
            smap = self._smap
            kept = self._rows()
            B_dep = se.DenseMatrix([[smap.to_se(self._k_nh[i, j]) for j in range(p, o)] for i in kept])
            B_aux = se.DenseMatrix([[smap.to_se(K[i, j]) for j in range(K.cols)] for i in kept])
            self._Aaux_se_cache = -B_dep.LUsolve(B_aux)
        A = self._Aaux_se_cache
        p = o - len(self._udep)
        return [aux[i] + sum((A[j, i] * rows[p + j] for j in range(len(self._udep))), se.Integer(0))
                for i in range(len(aux))]

    def _rows(self) -> tuple:
        """The velocity-constraint rows the reduced SymPy forms use: all of them, or with
        redundant configuration constraints m rows independent at a generic configuration
        (chosen by column-pivoted QR; valid where those rows stay independent)."""
        rows = getattr(self, "_square_rows", None)
        return rows if rows is not None else tuple(range(self._k_nh.rows))

    def _square(self, mat: sm.Matrix) -> sm.Matrix:
        """``mat``'s rows of :meth:`_rows` (all rows of a square set)."""
        rows = self._rows()
        if not mat.rows or len(rows) == mat.rows:
            return mat
        return mat.extract(list(rows), list(range(mat.cols)))

    def _Ars_se(self):
        """A = -B_dep^{-1} B_ind in symengine: by LU without simplification, or with the
        ``constraint_solver`` the user chose (e.g. "CRAMER", as SymPy's bicycle test does),
        whose A then shapes every reduced form (mass matrix, forcing, Fr, Fr*)."""
        if getattr(self, "_Ars_se_cache", None) is None:
            p = len(self._u) - len(self._udep)
            smap = self._smap
            if self._constraint_solver not in (None, "LU"):
                A = self._Ars
                self._Ars_se_cache = se.DenseMatrix(
                    [[smap.to_se(A[i, j]) for j in range(A.cols)] for i in range(A.rows)])
                return self._Ars_se_cache
            B = [[smap.to_se(self._k_nh[i, j]) for j in range(len(self._u))] for i in self._rows()]
            B_ind = se.DenseMatrix([row[:p] for row in B])
            B_dep = se.DenseMatrix([row[p:] for row in B])
            self._Ars_se_cache = -B_dep.LUsolve(B_ind)
        return self._Ars_se_cache

    # ------------------------------------------------------------- results
    def _require_eqs(self):
        if self._se is None:
            raise ValueError("Need to compute Fr, Fr* first: call kanes_equations(bodies, loads).")

    def kindiffdict(self) -> dict:
        """Map q' -> expression in q, u, t (from the kinematic differential equations)."""
        if not self._qdot_u_map:
            raise AttributeError("Create an instance of KanesMethod with kinematic differential "
                                 "equations to use this method.")
        return self._qdot_u_map

    @property
    def auxiliary_eqs(self) -> sm.Matrix:
        """Fr + Fr* for the auxiliary speeds (they expose noncontributing forces)."""
        self._require_eqs()
        if not len(self._uaux):
            raise ValueError("No auxiliary speeds have been declared.")
        return self._aux_eq

    @property
    def mass_matrix_kin(self) -> sm.Matrix:
        return self._k_kqdot if self.explicit_kinematics else self._k_kqdot_implicit

    @property
    def forcing_kin(self) -> sm.Matrix:
        if self.explicit_kinematics:
            return -(self._k_ku * self._u + self._f_k)
        return -(self._k_ku_implicit * self._u + self._f_k_implicit)

    @property
    def mass_matrix(self) -> sm.Matrix:
        """Rows: reduced dynamic equations (p) then acceleration constraints (m); o columns."""
        self._require_eqs()
        return sm.Matrix([self._k_d, self._square(self._k_dnh)])

    @property
    def forcing(self) -> sm.Matrix:
        self._require_eqs()
        return sm.Matrix([self._form("forcing_d"), -self._square(self._f_dnh)])

    @property
    def mass_matrix_full(self) -> sm.Matrix:
        """The (n + o) square mass matrix including the kinematic equations."""
        self._require_eqs()
        o, n = len(self._u), len(self._q)
        return (self.mass_matrix_kin.row_join(sm.zeros(n, o))).col_join(
            sm.zeros(o, n).row_join(self.mass_matrix))

    @property
    def forcing_full(self) -> sm.Matrix:
        self._require_eqs()
        return sm.Matrix([self.forcing_kin, self.forcing])

    def rhs(self, inv_method: str | None = None) -> sm.Matrix:
        """Symbolic x' = [q'; u'] (solves the symbolic mass matrix: only on request)."""
        rhs = sm.zeros(len(self._q) + len(self._u), 1)
        kdes = self.kindiffdict()
        for i, qi in enumerate(self._q):
            rhs[i] = kdes[qi.diff(t)]
        if inv_method is None:
            rhs[len(self._q):, 0] = self.mass_matrix.LUsolve(self.forcing)
        else:
            rhs[len(self._q):, 0] = self.mass_matrix.inv(inv_method, try_block_diag=True) * self.forcing
        return rhs

    def to_eom(self, noncontributing: Sequence | None = None, name: str | None = None, *,
               extra_states: Any = None, specifieds: Sequence | None = None) -> EquationsOfMotion:
        """The canonical EquationsOfMotion (unreduced dynamics; no symbolic inversion).

        ``noncontributing``: the unknowns of the auxiliary equations (defaults to
        the symbols that appear only in them).  ``extra_states``: extra
        first-order states, ``{a: a'}`` or SymPy biomechanics objects (their
        ``x``, ``r``, ``rhs()``); ``specifieds``: the specified inputs.  With
        either given, every function of time must be declared (see
        :class:`~symbody.EquationsOfMotion`).
        """
        self._require_eqs()
        aux = self._aux_eq if len(self._uaux) else sm.Matrix(0, 1, [])
        dynamic_se = None
        if aux.rows:
            M_d, g_d = self._unreduced_sympy()
            if noncontributing is None:
                noncontributing = self._detect_noncontributing(M_d, g_d, aux)
            if noncontributing:
                zero = dict.fromkeys(noncontributing, 0)
                g_d = g_d.xreplace(zero)
        else:
            # the dynamic block stays in symengine; SymPy's forms are made when first asked for
            mass, rest = self._unreduced_se()
            M_d = g_d = None
            conv = self._converter()

            def to_sympy(mass=mass, rest=rest):    # these forms, even if formed again later
                return (conv.matrix(mass) if mass else sm.zeros(0, 0),
                        sm.Matrix(len(rest), 1, [conv(e) for e in rest]))
            dynamic_se = SymengineDynamics(mass, rest, self._smap.names, to_sympy)
        blocks = CanonicalBlocks(
            q_ind=list(self._qind), q_dep=list(self._qdep), u_ind=list(self._uind),
            u_dep=list(self._udep), u_aux=list(self._uaux),
            K_qd=self._k_kqdot_implicit, K_u=self._k_ku_implicit, k=self._f_k_implicit,
            qdot_solution=sm.Matrix([self._qdot_u_map[qd] for qd in self._qdot]).xreplace(
                dict.fromkeys(self._uaux, 0)),
            f_h=self._f_h, holonomic_names=self._f_h_names,
            B=self._k_nh, b=self._f_nh, B_a=self._k_dnh, b_a=self._f_dnh,
            M_d=M_d, g_d=g_d, reduced=False, auxiliary=aux, noncontributing=noncontributing or (),
            dynamic_se=dynamic_se)
        specifieds = with_placeholders(specifieds, records_of_loads(self._forcelist))
        eom = EquationsOfMotion.from_blocks(blocks, specifieds=specifieds, extra_states=with_impact_states(
            extra_states, records_of_loads(self._forcelist)),
                                             name=name)
        eom.body_inertias = body_inertias(self._bodies)
        eom.contacts = contact_records(records_of_loads(self._forcelist), eom.kindiffdict)
        return eom

    def _detect_noncontributing(self, M_d, g_d, aux) -> list:
        """Symbols of the auxiliary equations that do no work in the dynamic equations.

        A candidate appears in the auxiliary equations, in no other block except
        possibly g_d, and its coefficient in g_d vanishes (checked numerically at
        random values: cancellations may need trigonometric identities).
        """
        def atoms(e):
            return e.free_symbols | {f for f in e.atoms(sm.core.function.AppliedUndef) if f.args == (t,)}

        elsewhere = set(self._q) | set(self._u) | set(self._uaux)
        for blk in (M_d, self._k_nh, self._f_nh, self._f_dnh, self._f_h, self._f_k_implicit,
                    self._k_ku_implicit, self._k_kqdot_implicit):
            for e in blk:
                elsewhere |= atoms(e)
        found = set()
        for e in aux:
            found |= atoms(e)
        candidates = sorted((s for s in found - elsewhere if s != t), key=str)
        out = []
        rng = random.Random(3)
        for c in candidates:
            coeff = [_coefficient(e, c) for e in g_d if e.has(c)]
            if not coeff:
                out.append(c)
                continue
            ok = True
            for _ in range(2):
                vals = {}
                for e in coeff:
                    for a in e.atoms(sm.Symbol, sm.core.function.AppliedUndef, sm.Derivative):
                        if a not in vals:
                            vals[a] = sm.Float(rng.uniform(0.2, 1.4))
                for e in coeff:
                    v = complex(sm.N(e.xreplace({k: v for k, v in vals.items() if isinstance(k, sm.Derivative)})
                                     .xreplace(vals)))
                    if abs(v) > 1e-9:
                        ok = False
                        break
                if not ok:
                    break
            if ok:
                out.append(c)
        return out

    def to_linearizer_data(self) -> KaneLinearizationData:
        """The equations as the symbolic linearizer reads them: those of :meth:`to_eom`
        (unreduced dynamic block), as a frozen :class:`KaneLinearizationData` (the role of
        SymPy's ``to_linearizer()``)."""
        return KaneLinearizationData.from_eom(self.to_eom())

    def to_linearizer(self, linear_solver: str | Callable = "LU") -> Linearizer:
        """The equations in SymPy's ``Linearizer`` form, as symbody's
        :class:`~symbody.formulation.linearizer.Linearizer` (SymPy's public interface:
        f_0 ... f_4, f_c, f_v, f_a, q, u, q_i, q_d, u_i, u_d, r, perm_mat and
        ``linearize(op_point=..., A_and_B=..., simplify=...)``), linearized by symbody's
        symbolic linearization.  ``linear_solver``: as for :meth:`linearize`.

        f_0 = K_qd q' (with k's q'-part), f_1 = K_u u + k (explicit kinematics: K_qd = I),
        f_2 = Fr*(u') at q' = u = 0, f_3 = Fr*(u' = 0) + Fr, f_4 = 0 (p rows each),
        f_v = B u + b, f_a = B_a u' + b_a, f_c = f_h.
        """
        from sympy.physics.mechanics import find_dynamicsymbols, msubs

        from .linearizer import Linearizer

        if self._se is None:
            raise ValueError("Need to compute Fr, Fr* first: call kanes_equations(bodies, loads).")
        u, ud, qd = self._u, self._udot, self._qdot
        if self.explicit_kinematics:
            f_k, k_ku, k_kqdot = self._f_k, self._k_ku, self._k_kqdot
        else:
            f_k, k_ku, k_kqdot = self._f_k_implicit, self._k_ku_implicit, self._k_kqdot_implicit
        fr, frstar = self._fr, self._frstar
        forms = {
            # msubs, not xreplace: u -> 0 must leave u' = Derivative(u, t) alone
            "f_0": msubs(f_k, dict.fromkeys(u, 0)) + k_kqdot * qd,
            "f_1": msubs(f_k, dict.fromkeys(qd, 0)) + k_ku * u,
            "f_2": msubs(frstar, dict.fromkeys(list(qd) + list(u), 0)),
            "f_3": msubs(frstar, dict.fromkeys(ud, 0)) + fr,
            "f_4": sm.zeros(frstar.rows, 1),
            "f_c": self._f_h,
            "f_v": self._f_nh + self._k_nh * u if self._k_nh.rows else sm.Matrix(),
            "f_a": self._f_dnh + self._k_dnh * ud if self._k_dnh.rows else sm.Matrix(),
        }
        data = self.to_linearizer_data()
        known = set(data.q) | set(data.u) | set(qd) | set(ud) | set(self._uaux) \
            | set(self._uaux.diff(t))
        r = set().union(*(find_dynamicsymbols(e, known)
                          for e in list(data.dynamic_mass) + list(data.dynamic_rest)))
        return Linearizer(data, forms, sorted(r, key=sm.default_sort_key), linear_solver)

    def linearize(self, *, new_method: Any = None, linear_solver: str | Callable = "LU",
                  **kwargs: Any) -> tuple:
        """Linearize about an operating point; SymPy's conventions (see symbody.formulation.symbolic_linearization)."""
        from .symbolic_linearization import linearize_kane  # loads symengine: not at import
        if self._f_h.rows > len(self._qdep):
            raise FormulationError(
                f"linearize needs as many configuration constraints as dependent coordinates "
                f"({len(self._qdep)}), got {self._f_h.rows}: form the method with an independent "
                "subset (symbody.redundant_constraints names the redundant equations)")
        return linearize_kane(self.to_linearizer_data(), linear_solver=linear_solver, **kwargs)

    # ------------------------------------------------------------ accessors
    @property
    def u(self) -> sm.Matrix:
        """Generalized speeds (independent, then dependent)."""
        return self._u



def _time_derivatives(xs) -> sm.Matrix:
    """[x'] as a column: Derivative(x(t), t) built directly for functions of time (Matrix.diff
    costs a tenth of a second on the 20-link chain's 42 speeds and coordinates)."""
    undef = sm.core.function.AppliedUndef
    return sm.Matrix(len(xs), 1, [sm.Derivative(x, t) if isinstance(x, undef) and x.args == (t,)
                                  else x.diff(t) for x in xs])


def _negated(e):
    """-e, distributed over a sum (symengine keeps -(a + b) as a product otherwise)."""
    if isinstance(e, se.Add):
        return se.Add(*[-a for a in e.args])
    return -e


class KaneEquations(Sequence):
    """``(Fr, Fr*)`` as returned by :meth:`KanesMethod.kanes_equations`, built on first access.

    Behaves as the 2-tuple SymPy returns (unpacking, indexing, ``len``, ``==``);
    the SymPy matrices are made from symbody's symengine sums only when one is
    looked at, so formation -> ``to_eom()`` -> ``compile`` never builds them.
    """

    def __init__(self, pair: Callable[[], tuple]):
        """``pair``: ``() -> (Fr, Fr*)``, called on each access (the method builds them once)."""
        self._pair = pair

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i):
        return self._pair()[i]

    def __eq__(self, other) -> bool:
        try:
            return tuple(self) == tuple(other)
        except TypeError:
            return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(tuple(self))


def _coefficient(expr, x):
    """d expr / d x, for a symbol or a function of time."""
    if isinstance(x, sm.Symbol):
        return expr.diff(x)
    d = sm.Dummy()
    return expr.xreplace({x: d}).diff(d).xreplace({d: x})


def _is_body(x) -> bool:
    return isinstance(x, (RigidBody, Particle))


def _sort_bodies_loads(a, b):
    """Accept ``kanes_equations(bodies, loads)`` and the old ``(loads, bodies)`` order."""
    def looks_like_loads(seq):
        try:
            items = list(seq)
        except TypeError:
            return False
        return bool(items) and all(isinstance(i, tuple) and not _is_body(i) for i in items)

    def looks_like_bodies(seq):
        try:
            items = list(seq)
        except TypeError:
            return False
        return bool(items) and all(_is_body(i) for i in items)

    if a is not None and b is not None and looks_like_loads(a) and looks_like_bodies(b):
        return b, a
    return a, b
