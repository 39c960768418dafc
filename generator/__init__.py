"""traced readout: a retrieval benchmark whose every reported claim is traced to evidence."""

__version__ = "0.1.0"
