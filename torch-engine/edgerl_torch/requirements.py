# Whether this interpreter can run the engine: Python and the four packages at their minimum versions,
# read from installed metadata (importlib.metadata) without importing torch, so the check is quick and
# a broken torch cannot crash it. `python -m edgerl_torch.requirements` exits 0 or 1. Leaves out numpy
# (torch's own dependency: pip installs it with torch).
from __future__ import annotations

import re
import sys
from importlib import metadata

MIN_PYTHON = (3, 10)

# The minimum versions the engine accepts (docs/torch-engine.md "Set-up"). It is tested on the pins of
# torch-engine/requirements.txt only; the minimums are the oldest releases that have every call it
# makes (transformers' `gradient_checkpointing_kwargs` and sdpa for Qwen2/Llama, PEFT's `use_rslora`).
MINIMUMS = {
    "torch": (2, 4),
    "transformers": (4, 45),
    "peft": (0, 13),
    "safetensors": (0, 4),
}

FIX = "run `npm run setup:torch` (or point --torch-python / EDGERL_TORCH_PYTHON at an interpreter that has them)"


def parse_version(text: str) -> tuple[int, ...]:
    """The leading numeric release of a version string: "2.13.0+cpu" → (2, 13, 0), "4.45.0.dev0" → (4, 45, 0)."""
    numbers = []
    for part in text.split("."):
        match = re.match(r"\d+", part)
        if not match:
            break
        numbers.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(numbers)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in version)


def installed_versions(packages=tuple(MINIMUMS)) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def problems(
    minimums: dict[str, tuple[int, ...]] | None = None,
    python: tuple[int, ...] | None = None,
    versions: dict[str, str | None] | None = None,
) -> list[str]:
    """One line per unmet requirement, naming it and the version found; [] when all are met.
    The arguments exist for tests (a fake minimum, a fake interpreter version)."""
    minimums = MINIMUMS if minimums is None else minimums
    python = tuple(sys.version_info[:3]) if python is None else python
    versions = installed_versions(tuple(minimums)) if versions is None else versions
    found = []
    if python[:2] < MIN_PYTHON:
        found.append(
            f"Python {_dotted(MIN_PYTHON)} or newer is needed, this is Python {_dotted(python)} ({sys.executable})"
        )
    for name, minimum in minimums.items():
        version = versions.get(name)
        if version is None:
            found.append(f"{name} is not installed (need {_dotted(minimum)} or newer)")
        elif parse_version(version) < minimum:
            found.append(f"{name} {version} is too old (need {_dotted(minimum)} or newer)")
    return found


def message(found: list[str]) -> str:
    return f"the torch engine cannot run with {sys.executable}: {'; '.join(found)}. To fix it, {FIX}."


def main() -> int:
    found = problems()
    if found:
        print(message(found), file=sys.stderr)
        return 1
    versions = installed_versions()
    print(
        f"edgerl torch engine requirements met: Python {_dotted(tuple(sys.version_info[:3]))}, "
        + ", ".join(f"{name} {version}" for name, version in versions.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
