"""tcsexam: evaluation pipeline for TCSExam and OR-Space."""

__version__ = "0.1.0"
HARNESS_VERSION = __version__
