"""A kernel's ``_many`` over SIMD lanes: several states through one straight-line program
(and ``_fast``: one state, built for AVX2).

``kernel.many(Z)`` evaluates the same program at every row of Z.  With ``lanes`` = L > 1,
:func:`lane_sources` writes it for L rows at a time in GCC's vector extension (``double``
vectors of L lanes, which gcc and clang both take): every temporary is a vector, sums and
products are vector operations, and anything else (sin, cos, comparisons, ...) is the
scalar C of :func:`.c_kernels._c_op` lane by lane.  The rows are transposed into vectors on
the way in and back on the way out; the rows left over (count mod L) go through the scalar
``fname``.  The vector functions are built for AVX2 (``target("avx2")``: one variant, which
compiles in less time than the baseline's emulation of 256-bit vectors by SSE2 pairs) and
run only where the processor has it (``__builtin_cpu_supports``; elsewhere every row goes
through ``fname``); contraction into fused multiply-adds is off, so every lane's numbers
are the scalar kernel's to the bit.  :func:`available` says whether the compiler takes
the attribute (x86-64 gcc and clang).
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

from .c_kernels import StraightLineProgram, _c_op, _copied_outputs, c_source, compiler_available

__all__ = ["lane_sources", "available", "LANES", "LANE_FLAGS"]

#: lanes per vector: four doubles (AVX2's 256 bits)
LANES = 4

#: version of the generated lane code: part of the kernel cache key of lane kernels
VERSION = "2"

#: added to the compiler flags of lane kernels: no fused multiply-adds (the scalar kernel's
#: numbers to the bit)
LANE_FLAGS = "-ffp-contract=off"


_TARGET = '__attribute__((target("avx2")))'


@functools.cache
def available() -> bool:
    """True when the C compiler builds AVX2 functions with a run-time check of the processor."""
    cc = compiler_available()
    if cc is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text(f"typedef double vd __attribute__((vector_size(32)));\n{_TARGET}\n"
                       "void probe(const vd *z, vd *out) { out[0] = z[0] * 2.0 + z[1]; }\n"
                       'int has(void) { return __builtin_cpu_supports("avx2"); }\n')
        r = subprocess.run([*cc.split(), "-O1", "-fPIC", "-shared", str(src), "-o",
                            str(Path(tmp, "probe.so"))], capture_output=True, timeout=60)
    return r.returncode == 0


def lane_sources(program: StraightLineProgram, fname: str, segment_size: int,
                 lanes: int = LANES) -> list[str]:
    """Translation units defining ``fname_many(Z, OUT, count)`` over ``lanes`` lanes (the
    scalar ``fname`` of :func:`.c_kernels.c_source` does the rows left over)."""
    ops, nargs, nout = program.ops, program.nargs, len(program.outputs)
    nseg = max(1, -(-len(ops) // segment_size))
    seg_of = [i // segment_size for i in range(len(ops))]
    shared: dict[int, int] = {}
    for i, (_, operands) in enumerate(ops):
        for a in operands:
            if isinstance(a, tuple) and a[0] == "t" and a[1] not in shared and seg_of[a[1]] != seg_of[i]:
                shared[a[1]] = len(shared)
    stores: dict[int, list[int]] = {}
    for j, ref in enumerate(program.outputs):
        if ref[0] == "t":
            stores.setdefault(ref[1], []).append(j)
    target = _TARGET
    header = (f"#include <math.h>\n#include <stdlib.h>\n#include <string.h>\n"
              f"#ifndef M_PI\n#define M_PI 3.14159265358979323846\n#endif\n"
              f"#ifndef M_E\n#define M_E 2.7182818284590452354\n#endif\n"
              f"typedef double vd __attribute__((vector_size({8 * lanes})));\n")
    signature = "(const vd *restrict z, vd *restrict w, vd *restrict out)"
    sources = []
    for s in range(nseg):
        lo, hi = s * segment_size, min(len(ops), (s + 1) * segment_size)

        def vector(ref, s=s):
            if ref[0] == "z":
                return f"z[{ref[1]}]"
            if ref[0] == "c":
                return ref[1]
            i = ref[1]
            return f"w[{shared[i]}]" if i in shared and seg_of[i] != s else f"t{i}"

        def lane(ref, s=s):
            return ref[1] if ref[0] == "c" else f"{vector(ref, s)}[l]"

        lines = [header, f"{target}\nvoid {fname}_v{s}{signature} {{"]
        for i in range(lo, hi):
            kind, operands = ops[i]
            if kind in ("+", "*") and any(a[0] != "c" for a in operands):
                # a literal goes last: vector op scalar broadcasts it
                refs = sorted(operands, key=lambda a: a[0] == "c")
                lines.append(f"  const vd t{i} = {_c_op(kind, refs, vector)};")
            elif kind == "pow" and operands[0][0] != "c" and 0 < abs(operands[1]) <= 4:
                # small integer powers as products (and 1.0 / them), as the scalar C has them
                lines.append(f"  const vd t{i} = {_c_op(kind, operands, vector)};")
            else:
                lines.append(f"  vd t{i};\n  for (int l = 0; l < {lanes}; ++l) "
                             f"t{i}[l] = {_c_op(kind, operands, lane)};")
            if i in shared:
                lines.append(f"  w[{shared[i]}] = t{i};")
            for j in stores.get(i, ()):
                lines.append(f"  out[{j}] = t{i};")
        lines.append("}\n")
        sources.append("\n".join(lines))
    nw = max(1, len(shared))
    decls = "\n".join(f"void {fname}_v{s}{signature};" for s in range(nseg))
    calls = "\n".join(f"    {fname}_v{s}(zv, wv, ov);" for s in range(nseg))
    temp_outputs = sorted(j for js in stores.values() for j in js)
    table = ",".join(map(str, temp_outputs)) or "0"
    copied = "\n".join("    " + line for line in _copied_outputs(program.outputs))
    main = f"""{header}
void {fname}_fast(const double *restrict z, double *restrict out);
{decls}

{target}
static void lanes_block(const double *Z, double *OUT, vd *zv, vd *wv, vd *ov)
{{
  static const long idx[{max(1, len(temp_outputs))}] = {{{table}}};
  for (long k = 0; k < {nargs}; ++k)
    for (int l = 0; l < {lanes}; ++l) zv[k][l] = Z[l * {nargs} + k];
{calls}
  for (long q = 0; q < {len(temp_outputs)}; ++q)
    for (int l = 0; l < {lanes}; ++l) OUT[l * {nout} + idx[q]] = ov[idx[q]][l];
  for (int l = 0; l < {lanes}; ++l) {{
    const double *z = Z + l * {nargs};
    double *out = OUT + l * {nout};
    (void)z; (void)out;
{copied}
  }}
}}

void {fname}_many(const double *Z, double *OUT, long count) {{
  long i = 0;
  if (count >= {lanes} && __builtin_cpu_supports("avx2")) {{
    size_t bytes = (sizeof(vd) * ({nargs} + {nw} + {nout}) + 63) / 64 * 64;
    vd *buf = (vd *)aligned_alloc(64, bytes);
    if (buf) {{
      for (; i + {lanes} <= count; i += {lanes})
        lanes_block(Z + i * {nargs}, OUT + i * {nout}, buf, buf + {nargs}, buf + {nargs + nw});
      free(buf);
    }}
  }}
  for (; i < count; ++i) {fname}_fast(Z + i * {nargs}, OUT + i * {nout});
}}
"""
    sources.append(main)
    return sources + _scalar_avx(program, fname, segment_size)


def _scalar_avx(program: StraightLineProgram, fname: str, segment_size: int) -> list[str]:
    """``fname_fast(z, out)``: the scalar program built for AVX2 (the three-operand VEX
    instructions save the register copies of SSE2's two-operand ones: 1.2-1.6x on the
    robots' recursions, the same numbers) where the processor has it, else ``fname``."""
    units = c_source(program, f"{fname}_avx", segment_size, many=False)
    units = [u.replace(f"void {fname}_avx_s", f"{_TARGET}\nvoid {fname}_avx_s") for u in units]
    units.append(f"""void {fname}(const double *restrict z, double *restrict out);
void {fname}_avx(const double *restrict z, double *restrict out);

void {fname}_fast(const double *restrict z, double *restrict out)
{{
  if (__builtin_cpu_supports("avx2")) {fname}_avx(z, out); else {fname}(z, out);
}}
""")
    return units
