# Op `memory`: the device allocator's peak and current bytes on a GPU; the process's resident set on a
# CPU (peak from getrusage, current from /proc); the bytes of parameters the rank holds (its shards under
# FSDP). With several ranks, the largest of each and every rank's figures. Leaves out resetting the peak.
from __future__ import annotations

import os
import resource
import sys

import torch

from . import fsdp


def _cpu() -> tuple[int, int]:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is KiB on Linux, bytes on macOS (getrusage(2) on each).
    peak = peak if sys.platform == "darwin" else peak * 1024
    current = peak
    try:
        with open("/proc/self/statm", encoding="ascii") as file:
            current = int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")  # resident pages
    except OSError:
        pass
    return peak, current


def _parameter_bytes(session) -> int:
    """Base weights and adapter as this rank holds them: whole, or its shards (what FSDP divides)."""
    if session.loaded is None or session.loaded.causal_lm is None:
        return 0
    return sum(fsdp.local(p).numel() * p.element_size() for p in session.loaded.causal_lm.parameters())


def memory(session) -> dict:
    loaded = session.loaded
    if loaded is not None and loaded.device.type == "cuda":
        mine = (torch.cuda.max_memory_allocated(loaded.device), torch.cuda.memory_allocated(loaded.device))
    else:
        mine = _cpu()
    ranks = session.world.gather([(*mine, _parameter_bytes(session))])
    if ranks is None:
        return {}
    return {
        "peak_bytes": max(peak for peak, _, _ in ranks),
        "current_bytes": max(current for _, current, _ in ranks),
        "parameter_bytes": max(held for _, _, held in ranks),
        "device": "cpu" if loaded is None else str(loaded.device),
        "ranks": [
            {"peak_bytes": peak, "current_bytes": current, "parameter_bytes": held} for peak, current, held in ranks
        ],
    }
