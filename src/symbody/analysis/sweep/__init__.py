"""sweep(): many simulations of one compiled model -- Monte Carlo, parameter and design studies.

Each *case* is a dict that changes the base run ``simulate(model, t_span, x0, p, ...)``::

    {"q1": 0.3, "m": 2.0}                        # names of states, constants or specified inputs
    {"x0": {...} or array, "p": {...}, "specifieds": ...}   # or whole groups

A name of a state (coordinate or independent speed) replaces that entry of ``x0``, a name
of a constant that entry of ``p``, a name of a specified input its (constant) value.
:func:`grid_cases` builds the Cartesian product of value lists, :func:`sample_cases` a
seeded uniform sample from ranges.

**Assembly branch.** With holonomic constraints f_h(q, t) = 0 each case's dependent
coordinates are solved on the branch (assembly mode) of the base state: by continuation
from the nearest case already solved (Newton's method from its q_dep while the case's
independent coordinates and constants move to their values in sub-steps; see
:func:`~symbody.analysis.initial_state.continue_assembly`), starting from the base ``x0``
or from ``assembly_branch=`` (a state on the wanted branch).  A case that could only be
assembled elsewhere (a different sign of det ∂f_h/∂q_dep than the base, or not reached by
continuation) has ``branch_ok = False`` in the table and an :class:`AssemblyBranchWarning`
names it; ``result.initial_states`` holds the states the runs started from.

**Runs.** Every run is the same deterministic ``simulate`` call as a serial loop from
``result.initial_states`` would make, so the results equal the serial ones to the last
bit, in the order of the cases.  The first runs are timed in this process; when the rest
would gain from workers, they go in chunks of about 0.1 s of work (0.25 s on Dask) to
local worker processes (``fork`` on Linux: the model and the inputs are inherited, never
pickled; elsewhere ``spawn`` with the settings sent once by cloudpickle, so lambdas work)
or, given a ``dask.distributed.Client``, to its workers (model and settings sent once
per worker by a worker plugin, which also reaches workers restarted later).  A sweep
too small to gain, or on a machine whose cores are busy, runs serially; ``result.parallel``
says which and why.  Local workers are kept for the next sweep of the same model
(:mod:`.processes`).
A run that fails does not stop the sweep: its row of ``result.table`` has the status and
message.  A worker process that dies loses only the case it was running, which is retried
once and then recorded with status -101.  ``execution=Execution(checkpoint="file.jsonl")``
appends each finished row to the file and, run again, skips the cases already there.  Where
and how the runs go is one :class:`Execution` object; how each run integrates is the same
``constraints=`` / ``solver=Solver(...)`` as for ``simulate``.
"""


from ..initial_state import AssemblyBranchWarning
from .cases import grid_cases, sample_cases
from .driver import Execution, sweep
from .result import SweepResult
from .runs import WORKER_DIED as WORKER_DIED  # the status of a case lost with its worker

__all__ = ["sweep", "Execution", "SweepResult", "grid_cases", "sample_cases", "AssemblyBranchWarning"]
