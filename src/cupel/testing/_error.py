"""The failure type of the testing vocabulary (spec: Cupel.Testing Vocabulary, PD-4)."""

from __future__ import annotations

__all__ = ["SelectionReportAssertionError"]


class SelectionReportAssertionError(AssertionError):
    """A :class:`~cupel.testing.SelectionReportAssertionChain` assertion did not hold.

    The spec's ``SelectionReportAssertionException``. It derives from :class:`AssertionError`, so test
    runners report it as a test failure rather than an error. ``str(error)`` is the spec's message;
    ``assertion_name`` is the spec's (PascalCase) name of the assertion that failed.
    """

    # Test runners print the qualified name; show the public one.
    __module__ = "cupel.testing"

    def __init__(self, message: str, assertion_name: str) -> None:
        super().__init__(message)
        self.message = message
        self.assertion_name = assertion_name

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return (type(self), (self.message, self.assertion_name))
