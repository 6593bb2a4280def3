"""Compatibility modules: every use of a third-party library's private names goes through here.

One module per library (:mod:`.sympy`, :mod:`.scipy`, :mod:`.matplotlib`).  Each names
the versions it was checked on (``CHECKED_ON``) and is covered by a test in
``tests/compat/`` that fails, naming the private thing, when a release changes it.  Where
a public API does the job, the library code uses that instead; what is left here has no
public equivalent at the same cost.  ``make test-latest`` runs the suite against the
newest releases, and ``pyproject.toml`` bounds the versions from above.
"""
