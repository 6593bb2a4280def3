"""symbody's version, in a module of its own so that any layer can read it without importing
the package's top (``symbody.__version__`` is this value)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
