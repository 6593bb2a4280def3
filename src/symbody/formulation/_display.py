"""Rich display of EquationsOfMotion in Jupyter: the equations when small, a summary when large.

Printing the Whipple bicycle's dynamic block as LaTeX took 110 s and 10 MB; a notebook
cell must answer in well under a second.  The size of every block is therefore measured
first as the number of nodes of its expression *trees* (what a printer writes out),
counted over the shared DAG in linear time and capped at :data:`COUNT_CAP`.  Blocks
whose total stays under :data:`FULL_LIMIT` nodes are printed in full; otherwise the
display is a table of the blocks (rows, columns, nonzero entries, size) with the
first entries of the small ones.
"""

from __future__ import annotations

import html

import sympy as sm

from ..symengine_bridge import DESCEND, fold_dag

#: Tree nodes up to which the equations are printed in LaTeX: printing costs about
#: 0.1 ms and 7 bytes per node, so this stays under 0.5 s and 40 kB.
FULL_LIMIT = 4000
#: The blocks the full LaTeX display prints.
_PRINTED = ("kinematic_qdot", "kinematic_u", "kinematic_rest", "dynamic_mass", "dynamic_rest",
            "holonomic", "velocity_matrix", "velocity_rest")
#: Entries of a block shown in the summary are limited to this many tree nodes each.
ENTRY_LIMIT = 60
#: Counting stops here: larger blocks are reported as "more than COUNT_CAP".
COUNT_CAP = 10**7

_BLOCKS = (
    ("holonomic", "holonomic", "f_h(q, t) = 0"),
    ("velocity", "velocity_matrix", "B (in B u + b = 0)"),
    ("velocity rest", "velocity_rest", "b"),
    ("kinematic", "qdot_solution", "q' = ..."),
    ("mass matrix", "dynamic_mass", "M_d (in M_d u' + g_d = 0)"),
    ("dynamic rest", "dynamic_rest", "g_d"),
    ("acceleration", "acceleration_matrix", "B_a (in B_a u' + b_a = 0)"),
    ("acceleration rest", "acceleration_rest", "b_a"),
    ("auxiliary", "auxiliary", "auxiliary equations"),
)


def tree_size(exprs, cap: int = COUNT_CAP) -> int:
    """Number of nodes of the expression trees of ``exprs`` (shared subtrees counted at
    every use, as a printer writes them), computed once per distinct node; at most ``cap``."""
    def visit(e):
        return DESCEND if getattr(e, "args", ()) else 1

    def combine(e, sizes):
        return min(cap, 1 + sum(sizes))

    memo: dict = {}
    total = 0
    for root in exprs:
        total = min(cap, total + fold_dag([root], visit, combine, memo)[0])
        if total >= cap:
            break
    return total


def block_sizes(eom) -> list[tuple[str, str, tuple[int, int], int, int]]:
    """(label, description, shape, nonzero entries, tree nodes) of each nonempty block."""
    rows = []
    for label, attr, what in _BLOCKS:
        block = getattr(eom, attr, None)
        if block is None or not len(block):
            continue
        nonzero = sum(1 for e in block if e != 0)
        rows.append((label, what, tuple(block.shape), nonzero, tree_size(list(block))))
    return rows


def _size_text(nodes: int) -> str:
    return f"more than {COUNT_CAP:,}" if nodes >= COUNT_CAP else f"{nodes:,}"


def _heading(eom) -> str:
    name = f" {eom.name!r}" if getattr(eom, "name", None) else ""
    return (f"EquationsOfMotion{name}: {eom.n}+{eom.M} coordinates, {eom.p}+{eom.m} speeds, "
            f"{len(eom.constants)} constants, {len(eom.specifieds)} specifieds, "
            f"dynamic {'reduced' if eom.dynamic_reduced else 'unreduced'}")


def _first_entries(eom, attr: str, count: int = 3) -> list[str]:
    block = getattr(eom, attr)
    out = []
    for (i, j), e in zip(((i, j) for i in range(block.rows) for j in range(block.cols)), block):
        if e == 0:
            continue
        if tree_size([e], cap=ENTRY_LIMIT + 1) > ENTRY_LIMIT:
            continue
        out.append((i, j, e))
        if len(out) == count:
            break
    return [f"[{i}, {j}] = {e}" for i, j, e in out]


def is_small(eom) -> bool:
    """True when the whole system prints in LaTeX quickly (under FULL_LIMIT tree nodes)."""
    total = 0
    for attr in _PRINTED:
        block = getattr(eom, attr, None)
        if block is not None and len(block):
            total += tree_size(list(block), cap=FULL_LIMIT + 1)
            if total > FULL_LIMIT:
                return False
    return True


def latex(eom) -> str:
    """All equations in LaTeX when small; else the summary as a LaTeX array."""
    from sympy.physics.vector.printing import vlatex

    if not is_small(eom):
        rows = [r"\text{" + _latex_text(_heading(eom)) + "}"]
        for label, _, shape, nonzero, nodes in block_sizes(eom):
            rows.append(r"\text{" + _latex_text(
                f"{label}: {shape[0]} x {shape[1]}, {nonzero} nonzero, {_size_text(nodes)} operations") + "}")
        return "$\\displaystyle \\begin{array}{l}" + r" \\ ".join(rows) + r"\end{array}$"
    t = eom.t
    rows = []
    qd = sm.Matrix([qi.diff(t) for qi in eom.q])
    ud = sm.Matrix([ui.diff(t) for ui in eom.u][:eom.dynamic_mass.cols])
    rows.append(vlatex(sm.Eq(eom.kinematic_qdot * qd + eom.kinematic_u * sm.Matrix(eom.u)
                             + eom.kinematic_rest, sm.zeros(len(eom.q), 1), evaluate=False)))
    if eom.dynamic_mass.rows:
        rows.append(vlatex(sm.Eq(sm.MatMul(eom.dynamic_mass, ud, evaluate=False) + eom.dynamic_rest,
                                 sm.zeros(eom.dynamic_mass.rows, 1), evaluate=False)))
    if eom.holonomic.rows:
        rows.append(vlatex(sm.Eq(eom.holonomic, sm.zeros(eom.M, 1), evaluate=False)))
    if eom.velocity_matrix.rows:
        rows.append(vlatex(sm.Eq(eom.velocity_matrix * sm.Matrix(eom.u) + eom.velocity_rest,
                                 sm.zeros(eom.m, 1), evaluate=False)))
    extra = tuple(getattr(eom, "extra_states", ()))
    if extra:                                 # x_e' = f_e(t, q, u, x_e, r)
        rows.append(vlatex(sm.Eq(sm.Matrix([x.diff(t) for x in extra]), sm.Matrix(eom.extra_derivatives),
                                 evaluate=False)))
    return "$\\displaystyle " + r" \\ ".join(rows) + "$"


def _latex_text(text: str) -> str:
    for a, b in (("\\", r"\backslash "), ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("#", r"\#"),
                 ("%", r"\%"), ("&", r"\&"), ("$", r"\$")):
        text = text.replace(a, b)
    return text


def markdown(eom) -> str | None:
    """The summary table in Markdown for large systems; None (use LaTeX) for small ones."""
    if is_small(eom):
        return None
    lines = [f"**{_heading(eom)}**", "", "| block | rows x columns | nonzero | operations | first entries |",
             "|---|---|---|---|---|"]
    attrs = {label: attr for label, attr, _ in _BLOCKS}
    for label, what, shape, nonzero, nodes in block_sizes(eom):
        first = "; ".join(_first_entries(eom, attrs[label])).replace("|", r"\|")
        lines.append(f"| {label} ({what}) | {shape[0]} x {shape[1]} | {nonzero} | {_size_text(nodes)} | "
                     f"`{first}` |" if first else
                     f"| {label} ({what}) | {shape[0]} x {shape[1]} | {nonzero} | {_size_text(nodes)} | |")
    return "\n".join(lines)


def html_table(eom) -> str | None:
    """The summary table in HTML for large systems; None (use LaTeX) for small ones."""
    if is_small(eom):
        return None
    attrs = {label: attr for label, attr, _ in _BLOCKS}
    rows = []
    for label, what, shape, nonzero, nodes in block_sizes(eom):
        first = "<br>".join(html.escape(s) for s in _first_entries(eom, attrs[label]))
        rows.append(f"<tr><td>{html.escape(label)}</td><td>{html.escape(what)}</td>"
                    f"<td>{shape[0]} &times; {shape[1]}</td><td>{nonzero}</td>"
                    f"<td>{_size_text(nodes)}</td><td><code>{first}</code></td></tr>")
    return (f"<p><b>{html.escape(_heading(eom))}</b></p><table><thead><tr><th>block</th><th>meaning</th>"
            "<th>rows &times; columns</th><th>nonzero</th><th>operations (expression tree nodes)</th>"
            "<th>first entries</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            "<p>Too large to print in full; index the blocks (e.g. <code>eom.dynamic_mass[0, 0]</code>) "
            "to see entries.</p>")
