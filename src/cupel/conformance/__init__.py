"""Run Cupel conformance vectors (spec: Test Vector Format, Running the Suite)."""

from cupel.conformance.runner import VectorResult, discover_vectors, run_vector, run_vectors

__all__ = ["VectorResult", "discover_vectors", "run_vector", "run_vectors"]
