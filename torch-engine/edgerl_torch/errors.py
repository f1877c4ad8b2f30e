# The engine's typed error and the one place exceptions become protocol error codes
# (docs/torch-engine.md "Error codes"). No torch import: torch's OOM is recognised by class name.
from __future__ import annotations

CODES = (
    "engine-requirements",
    "engine-protocol",
    "engine-bad-request",
    "engine-state",
    "engine-nonfinite-gradient",
    "engine-out-of-memory",
    "engine-internal",
)


class EngineError(Exception):
    """An error with a protocol code; the message is for a person and names the field or the fix."""

    def __init__(self, code: str, message: str) -> None:
        if code not in CODES:
            raise ValueError(f"unknown engine error code {code}")
        super().__init__(message)
        self.code = code


def bad_request(message: str) -> EngineError:
    return EngineError("engine-bad-request", message)


def state_error(message: str) -> EngineError:
    return EngineError("engine-state", message)


def _is_out_of_memory(error: BaseException) -> bool:
    # torch.OutOfMemoryError (torch.cuda.OutOfMemoryError is the same class since torch 2.1);
    # CPU allocation failures surface as RuntimeError "DefaultCPUAllocator: can't allocate memory".
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and ("out of memory" in text.lower() or "can't allocate memory" in text)


def error_reply(error: BaseException) -> tuple[str, str]:
    """(code, message) for any exception an op raised."""
    if isinstance(error, EngineError):
        return error.code, str(error)
    if _is_out_of_memory(error):
        return "engine-out-of-memory", f"{type(error).__name__}: {error}"
    # A directory that is not a model or adapter, a file that does not exist: the request named it.
    if isinstance(error, (FileNotFoundError, NotADirectoryError, IsADirectoryError)):
        return "engine-bad-request", f"{type(error).__name__}: {error}"
    return "engine-internal", f"{type(error).__name__}: {error}"
