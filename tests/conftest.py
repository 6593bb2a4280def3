import os

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SYMBODY_QUIET", "1")
