"""takt command-line tools: run a system description, the demo, and benchmarks."""

__version__ = "0.1.0"
