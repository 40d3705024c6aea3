__version__ = "9.9.9"
