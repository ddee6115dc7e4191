"""The version of fctheory, in a module of its own so that any module can read it without importing the package."""

__version__ = "1.1.0"
