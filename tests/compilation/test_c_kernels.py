"""Generated-C kernels: same numbers as the numpy backend, collected sums, verified disk cache."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import symbody
from symbody.compilation import (
    available_backends,
    c_kernels,
    codegen,
    compile,
    kernel_backends,
    make_function,
)
from symbody.compilation import cache as kernel_cache
from systems import n_link_pendulum_on_cart

pytestmark = pytest.mark.skipif("c" not in available_backends(), reason="no C compiler")


@pytest.fixture(scope="module")
def chain_eom():
    """The 12-link pendulum on a cart (mid-size: its dynamics kernel has about 3 000
    operations), formed by symbody's Kane with a specified cart force."""
    N, q, u, kd, particles, loads, constants = n_link_pendulum_on_cart(12)
    km = symbody.KanesMethod(N, q, u, kd_eqs=kd)
    km.kanes_equations(particles, loads)
    return km.to_eom()


def test_c_kernels_equal_numpy_backend_on_mid_size_model(chain_eom, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    # segments of 500 operations: the kernel is split over several C functions and
    # translation units compiled in parallel, with values passed through the workspace
    monkeypatch.setattr(c_kernels, "SEGMENT_SIZE", 500)
    c_model = compile(chain_eom, backend="c")
    np_model = compile(chain_eom, backend="numpy", cache=False)
    assert c_model.kernels.main.nout == np_model.kernels.main.nout
    rng = np.random.default_rng(7)
    nc, ns = len(c_model.constants), len(c_model.specifieds)
    X = rng.normal(size=(20, len(c_model.states)))
    p = rng.uniform(0.5, 1.5, nc)
    for x in X:
        r = rng.normal(size=ns)
        a, b = c_model.rhs(0.0, x, p, r=r), np_model.rhs(0.0, x, p, r=r)
        # both evaluate the same sums in a different order (collected sums in C): the
        # differences are round-off, relative to the size of the accelerations
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * np.abs(b).max())
    # every entry of the main kernel (q', M_d, -g_d), single and batched
    Z = rng.uniform(-2, 2, size=(5, c_model.layout.nz))
    kc = c_model.kernels.main.many(Z)
    kn = np_model.kernels.main.many(Z)
    np.testing.assert_allclose(kc, kn, rtol=1e-11, atol=1e-11 * np.abs(kn).max())
    np.testing.assert_allclose(c_model.kernels.main(Z[0]), kn[0], rtol=1e-11, atol=1e-11 * np.abs(kn).max())
    assert c_model.kernels.main.backend == "c"


def test_auto_backend_uses_c_for_large_kernels(chain_eom, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    monkeypatch.setattr(kernel_backends, "C_MIN_OPERATIONS", 500)
    model = compile(chain_eom)
    x = np.linspace(-1, 1, len(model.states))
    p = np.ones(len(model.constants))
    r = np.zeros(len(model.specifieds))
    xd = model.rhs(0.0, x, p, r=r)
    assert model.kernels.main.backend == "c"                  # big kernel: generated C
    ref = compile(chain_eom, backend="llvm", cache=False).rhs(0.0, x, p, r=r)
    np.testing.assert_allclose(xd, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    # a small function stays with LLVM
    a = sm.Symbol("a")
    assert make_function([[a]], sm.sin(a)).kernel.backend == "llvm"


def test_auto_backend_does_not_depend_on_the_cache(chain_eom, tmp_path, monkeypatch):
    """"auto" picks the backend from the kernel's size alone: a kernel built before with an
    explicit backend (here LLVM for a large kernel, C for a small one) is not reused, so the
    same model gives the same numbers whatever ran before in the same cache."""
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    monkeypatch.setattr(kernel_backends, "_AUTO_CHOICE", {})
    monkeypatch.setattr(kernel_backends, "C_MIN_OPERATIONS", 500)
    def main_backend(model):
        model.rhs(0.0, np.zeros(len(model.states)), np.ones(len(model.constants)),
                  r=np.zeros(len(model.specifieds)))               # builds the lazy kernels
        return model.kernels.main.backend

    assert main_backend(compile(chain_eom, backend="llvm")) == "llvm"   # now in memory and on disk
    assert main_backend(compile(chain_eom)) == "c"
    a = sm.Symbol("a")
    make_function([[a]], sm.cos(a) + a**3, backend="c")
    assert make_function([[a]], sm.cos(a) + a**3).kernel.backend == "llvm"
    # the choice is remembered on disk: a new process (empty memory) makes the same one
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    monkeypatch.setattr(kernel_backends, "_AUTO_CHOICE", {})
    assert main_backend(compile(chain_eom)) == "c"
    assert make_function([[a]], sm.cos(a) + a**3).kernel.backend == "llvm"


def test_functions_and_piecewise_in_c():
    x, y = sm.symbols("x y")
    exprs = [sm.Abs(x) + sm.atan2(y, x), sm.Piecewise((x, x > 0.5), (y**3, y <= 0), (1.0, True)),
             sm.exp(x) * sm.log(y**2 + 1) / sm.sqrt(2 + x), x**sm.Rational(3, 2) + 1 / sm.sqrt(y**2 + 1),
             sm.tanh(x) * sm.sign(y) + sm.Max(x, y, 0.2) - sm.Min(x, 1), x**-3 + y**7 + sm.pi + sm.E,
             sm.Piecewise((1.0, sm.And(x > 0, y < 0)), (2.0, sm.Or(sm.Eq(x, 1), sm.Ne(y, 2))), (3.0, True))]
    fc = make_function([[x, y]], exprs, backend="c", cache=False)
    fn = make_function([[x, y]], exprs, backend="numpy", cache=False)
    pts = np.array([[0.7, -0.3], [0.2, 0.4], [1.0, 2.0], [0.3, -1.5], [1.7, 2.0]])
    np.testing.assert_allclose(fc(pts), fn(pts), rtol=1e-13)
    assert fc.kernel.backend == "c"


def test_collected_sums_make_the_program_small():
    """a*b*m1 + a*b*m2 + a*b*m3 is computed as a*b*(m1 + m2 + m3): 2 products, 2 sums;
    the partial sums of the masses are shared between the entries."""
    import symengine as se
    a, b, m1, m2, m3 = se.symbols("_a0 _a1 _a2 _a3 _a4")
    e1 = a * b * m1 + a * b * m2 + a * b * m3
    prog = c_kernels.straight_line_program([e1], 5)
    kinds = [k for k, _ in prog.ops]
    assert kinds.count("*") == 2 and kinds.count("+") == 2
    # Kane's mass-matrix entries of a chain, sum over the links below: M_ij = l_i l_j c_ij sum_k m_k
    e2 = a * m1 + a * m2 + a * m3
    e3 = b * m1 + b * m2 + b * m3
    prog = c_kernels.straight_line_program([e2, e3], 5)
    kinds = [k for k, _ in prog.ops]
    assert kinds.count("+") == 2 and kinds.count("*") == 2


def test_c_library_cache_is_verified(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    q1, q2 = me.dynamicsymbols("q1 q2")
    exprs = [sm.sin(q1) * q2 + sm.cos(q1 * q2) ** 2, q1 / (1 + q2**2)]
    f1 = make_function([[q1, q2]], exprs, backend="c")
    libs = list((tmp_path / "kernels").rglob("*.so"))
    sigs = list((tmp_path / "kernels").rglob("*.so.sha256"))
    assert len(libs) == 1 and len(sigs) == 1
    built = []
    real = c_kernels.build_library
    monkeypatch.setattr(c_kernels, "build_library", lambda *a, **k: built.append(1) or real(*a, **k))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    f2 = make_function([[q1, q2]], exprs, backend="c")
    assert built == []                                   # loaded from disk
    np.testing.assert_allclose(f1([0.3, 1.7]), f2([0.3, 1.7]))
    expected = f1([0.3, 1.7])
    # a library whose bytes do not match the recorded digest is deleted and rebuilt
    # (written as a new file: the loaded library maps the old one, as the cache's own
    # atomic writes guarantee)
    data = bytearray(libs[0].read_bytes())
    data[-1] ^= 0xFF
    damaged = libs[0].with_name("damaged")
    damaged.write_bytes(bytes(data))
    damaged.replace(libs[0])
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    f3 = make_function([[q1, q2]], exprs, backend="c")
    assert built == [1]
    np.testing.assert_allclose(f3([0.3, 1.7]), expected)
    # the code generator's version is part of the key: a new version builds anew
    key = codegen._c_key(2, 2, codegen._to_symengine([q1, q2], exprs, "x")[1])
    assert kernel_cache.verified_library(key) is not None
    monkeypatch.setattr(kernel_backends, "CODEGEN_VERSION", codegen.CODEGEN_VERSION + "-next")
    assert codegen._c_key(2, 2, codegen._to_symengine([q1, q2], exprs, "x")[1]) != key


def test_saved_model_with_c_kernels_loads(chain_eom, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    model = compile(chain_eom, backend="c")
    x = np.linspace(-1, 1, len(model.states))
    p, r = np.ones(len(model.constants)), np.zeros(len(model.specifieds))
    expected = model.rhs(0.0, x, p, r=r)
    path = model.save(tmp_path / "chain.npz")
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    loaded = symbody.load_model(path)
    # rebuilt from the stored expressions, whose terms symengine may order differently:
    # the sums are evaluated in another order, equal to round-off
    np.testing.assert_allclose(loaded.rhs(0.0, x, p, r=r), expected, rtol=1e-11,
                               atol=1e-11 * np.abs(expected).max())
    assert loaded.kernels.main.backend == "c"


def test_c_compile_reports_progress(monkeypatch):
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    monkeypatch.setattr(c_kernels, "SEGMENT_SIZE", 4)        # several translation units
    x, y = sm.symbols("x y")
    exprs = [sm.sin(x + k * y) * (x - k) + sm.cos(k * x * y) for k in range(1, 6)]
    calls = []
    kernel = codegen.compile_kernel([x, y], exprs, backend="c", cache=False,
                                    progress=lambda done, total, message: calls.append((done, total)))
    np.testing.assert_allclose(kernel(np.array([0.3, 0.7])),
                               [float(e.subs({x: 0.3, y: 0.7})) for e in exprs], rtol=1e-14)
    assert calls and calls[-1][0] == calls[-1][1] and calls[-1][1] > 2   # one step per unit, all done


def _random_sums(rng, syms, count):
    """Sums of products like Kane's rows: shared factors, 2-term sum factors (distributed by
    the compiler), numeric coefficients, repeated and constant-only terms."""
    funcs = [sm.sin, sm.cos, lambda a: a**2, lambda a: a]
    atoms = [f(s) for s in syms for f in funcs]
    pairs = [atoms[rng.integers(len(atoms))] * atoms[rng.integers(len(atoms))]
             - atoms[rng.integers(len(atoms))] * atoms[rng.integers(len(atoms))] for _ in range(6)]
    exprs = []
    for _ in range(count):
        terms = []
        for _ in range(rng.integers(1, 12)):
            k = rng.integers(1, 5)
            factors = [atoms[i] for i in rng.integers(len(atoms), size=k)]
            if rng.random() < 0.5:
                factors.append(pairs[rng.integers(len(pairs))])
            coeff = [1, -1, 2, sm.Rational(1, 3)][rng.integers(4)]
            terms.append(coeff * sm.Mul(*factors))
        if rng.random() < 0.2:
            terms.append(sm.Integer(3))
        exprs.append(sm.Add(*terms))
    return exprs


def test_factored_sums_give_the_same_numbers():
    """The factoring of sums (common factors out, 2-term sum factors distributed, nested
    partial sums shared) changes the order of operations, never the value: random sums
    against the numpy backend (sympy's lambdify) at random points."""
    rng = np.random.default_rng(2024)
    syms = sm.symbols("a0:6")
    exprs = _random_sums(rng, syms, 60)
    fc = make_function([list(syms)], exprs, backend="c", cache=False)
    fn = make_function([list(syms)], exprs, backend="numpy", cache=False)
    pts = rng.uniform(-2, 2, size=(25, len(syms)))
    ref = fn(pts)
    # sums of up to 12 terms of size ~10: round-off ~1e-14 of the largest term
    np.testing.assert_allclose(fc(pts), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    assert fc.kernel.backend == "c"


def test_kane_rows_share_partial_sums():
    """The forcing rows of an n-link chain, Σ_s S_max(r,s) l_r l_s u_s² sin(q_s - q_r) + ...,
    take O(n) operations in all (common factors out, sin(q_s - q_r) distributed, nested
    sums over s <= r and s > r shared between rows), not O(n²): doubling n must not
    quadruple the operations outside the mass matrix."""
    counts = {}
    for n in (8, 16):
        N, q, u, kd, particles, loads, constants = n_link_pendulum_on_cart(n, specified=False)
        km = symbody.KanesMethod(N, q, u, kd_eqs=kd)
        km.kanes_equations(particles, loads)
        import symengine as se
        syms = list(q) + list(u) + list(constants)
        pos = [se.Symbol(f"_a{i}") for i in range(len(syms))]
        sub = dict(zip([se.sympify(s) for s in syms], pos))
        forcing = [se.sympify(e).xreplace(sub) for e in km.forcing]
        counts[n] = len(c_kernels.straight_line_program(forcing, len(pos)))
    assert counts[16] < 2.6 * counts[8], counts


def test_products_with_a_two_term_sum_pair_their_factors():
    """Entries like a chain's mass matrix, S l_r l_s (sin_r sin_s + cos_r cos_s), are computed
    as S ((l_r sin_r)(l_s sin_s) + (l_r cos_r)(l_s cos_s)) with the pair products shared:
    4 operations per entry (6 before), the same numbers as the numpy backend.  Entries
    whose pairs are not shared (the 3 x 3 corner with other factors) keep their form."""
    n = 8
    q = sm.symbols(f"q0:{n}")
    lengths = sm.symbols(f"l0:{n}")
    m = sm.symbols(f"m0:{n}")
    c = sm.symbols("c0:3")
    exprs = []
    for r in range(n):
        for s in range(r + 1):
            S = sum(m[max(r, s):])
            exprs.append(S * lengths[r] * lengths[s] * (sm.sin(q[r]) * sm.sin(q[s]) + sm.cos(q[r]) * sm.cos(q[s])))
    exprs += [c[0] * c[1] * (sm.exp(q[0]) * c[2] - q[1] * q[2]), c[2] * (q[0] * c[0] + q[1] ** 2)]
    args = list(q) + list(lengths) + list(m) + list(c)
    fc = make_function([args], exprs, backend="c", cache=False)
    fn = make_function([args], exprs, backend="numpy", cache=False)
    rng = np.random.default_rng(11)
    pts = rng.uniform(-2, 2, size=(20, len(args)))
    ref = fn(pts)
    # products of 5 factors and a 2-term sum: round-off ~1e-15 of the largest entry
    np.testing.assert_allclose(fc(pts), ref, rtol=1e-12, atol=1e-13 * np.abs(ref).max())
    import symengine as se
    pos = [se.Symbol(f"_a{i}") for i in range(len(args))]
    sub = dict(zip([se.sympify(a) for a in args], pos))
    off_diagonal = [e for e, (r, s) in zip(exprs, [(r, s) for r in range(n) for s in range(r + 1)]) if r != s]
    prog = c_kernels.straight_line_program([se.sympify(e).xreplace(sub) for e in off_diagonal], len(args))
    # 4 operations per entry plus, per link, sin, cos, the pair products and a partial
    # mass sum (about 4 n in all); the unpaired form takes 6 per entry (190 here)
    assert len(prog) <= 5 * len(off_diagonal) + 5 * n, len(prog)


@pytest.mark.parametrize("count", [5, 200])
def test_constant_and_argument_outputs_few_and_as_tables(count, tmp_path, monkeypatch):
    """Outputs that are literals (the zeros of a sparse matrix) or arguments: one statement
    each when few, loops over static index tables when many; the same numbers either way."""
    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    a, b, c = sm.symbols("a b c")
    exprs = []
    for i in range(count):
        exprs += [sm.Integer(0), a * sm.sin(b) + i, c, sm.Rational(1, 3), b if i % 2 else sm.Integer(-2)]
    kernel = codegen.compile_kernel([a, b, c], exprs, backend="c", name="tables")
    assert kernel.backend == "c"
    z = np.array([0.7, -1.3, 2.5])
    expected = np.array([float(e.subs({a: z[0], b: z[1], c: z[2]})) for e in exprs])
    np.testing.assert_allclose(kernel(z), expected, rtol=1e-15, atol=1e-15)
    Z = np.array([z, z[::-1]])
    np.testing.assert_array_equal(kernel.many(Z)[0], kernel(z))
    program = c_kernels.straight_line_program(
        codegen._to_symengine([a, b, c], exprs, "tables", None)[0], 3)
    source = "\n".join(c_kernels.c_source(program, "k"))
    assert ("static const long idx" in source) == (count * 4 >= c_kernels.TABLE_MIN_OUTPUTS)


def test_a_shared_two_term_sum_is_not_distributed():
    """beta = a b - c d and gamma = a c - b d, each used by many dot products
    x_k beta + y_k gamma + z_k e (as the RNEA derivatives' S ×ₘ v of a column, dotted with
    every row of the subtree): computed once (6 operations) and kept factors, 5 operations
    per entry (distributed into each entry: 11-12, 120 here); the numbers of numpy's."""
    import symengine as se
    n = 10
    a, b, c, d, e = se.symbols("_a0 _a1 _a2 _a3 _a4")
    xs, ys, zs = ([se.Symbol(f"_a{5 + j * n + k}") for k in range(n)] for j in range(3))
    beta, gamma = a * b - c * d, a * c - b * d
    exprs = [x * beta + y * gamma + z * e for x, y, z in zip(xs, ys, zs)]
    prog = c_kernels.straight_line_program(exprs, 5 + 3 * n)
    assert len(prog) <= 6 + 5 * n + 2, len(prog)
    args = [sm.Symbol(f"_a{k}") for k in range(5 + 3 * n)]
    sym = [sm.sympify(str(x)) for x in exprs]
    fc = make_function([args], sym, backend="c", cache=False)
    fn = make_function([args], sym, backend="numpy", cache=False)
    pts = np.random.default_rng(3).uniform(-2, 2, size=(5, len(args)))
    np.testing.assert_allclose(fc(pts), fn(pts), rtol=1e-13, atol=1e-14)


def test_one_kernel_built_by_two_threads_is_built_once(tmp_path, monkeypatch):
    """Two threads compiling the same kernel (two models with equal expressions, built in
    background threads) take turns: one build, both get it.  A library written but not yet
    sealed (its builder between the two) is not deleted by another's look into the cache."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("SYMBODY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel_backends, "_MEMORY", {})
    q1, q2 = me.dynamicsymbols("q1 q2")
    exprs = [sm.sin(q1) * sm.exp(q2) - q2 ** 3, sm.cos(q1 + 2 * q2)]
    key = codegen._c_key(2, 2, codegen._to_symengine([q1, q2], exprs, "x")[1])
    lib = kernel_cache.library_path(key)
    lib.parent.mkdir(parents=True, exist_ok=True)
    lib.write_bytes(b"written by another builder, not sealed yet")
    assert kernel_cache.verified_library(key) is None and lib.exists()
    built, both_in = [], threading.Barrier(2)
    real = c_kernels.build_library

    def counted(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(c_kernels, "build_library", counted)

    def compile_once():
        both_in.wait()
        return codegen.compile_kernel([q1, q2], exprs, backend="c")

    with ThreadPoolExecutor(2) as pool:
        kernels = [f.result() for f in [pool.submit(compile_once) for _ in range(2)]]
    assert built == [1]
    z = np.array([0.3, 1.7])
    np.testing.assert_array_equal(kernels[0](z), kernels[1](z))
    np.testing.assert_allclose(kernels[0](z), [np.sin(0.3) * np.exp(1.7) - 1.7 ** 3,
                                               np.cos(0.3 + 3.4)], rtol=1e-14)
