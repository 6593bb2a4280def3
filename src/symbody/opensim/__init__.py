"""OpenSim models as symbolic equations of motion (``symbody.load_opensim``).

One concept per module: :mod:`.xml_tree` (reading the file with line numbers),
:mod:`.parse` and :mod:`.legacy` (the 4.x and 3.x/2.x formats into one
:class:`~.model_spec.ModelSpec`), :mod:`.functions` (OpenSim's functions as expressions),
:mod:`.multibody` (Simbody's tree and order),
:mod:`.kinematics_only` (models whose bodies move without mass), :mod:`.mobilizers` (the joints),
:mod:`.dynamics` (M(q) and the bias), :mod:`.kinematics` (poses and Jacobians),
:mod:`.constraints` (holonomic constraints), :mod:`.forces` (one builder per force family),
:mod:`.model` (:class:`OpenSimModel`, :func:`load_opensim`), :mod:`.states` (OpenSim's
state order), :mod:`.muscle_states` (the muscles' states by OpenSim's names), :mod:`.system` (the SymPy System), :mod:`.scene` and :mod:`.vtp` (drawing).
"""

from . import muscle_states
from .forces import FORCE_BUILDERS, ForceContext, ForceContribution, register_force
from .kinematics_only import KinematicsOnlyError, KinematicsOnlyWarning
from .model import OpenSimImportWarning, OpenSimModel, load_opensim
from .multibody import AddedFreeJointWarning

__all__ = ["OpenSimModel", "load_opensim", "OpenSimImportWarning", "AddedFreeJointWarning",
           "FORCE_BUILDERS", "ForceContext", "ForceContribution", "register_force",
           "muscle_states", "KinematicsOnlyError", "KinematicsOnlyWarning"]
