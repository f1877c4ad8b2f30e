# `python -m edgerl_torch [--processes N] [--backend gloo|nccl] [--sharding none|fsdp]`: the engine process.
# Guards its stdout (frames only), dies with its parent, then serves frames (rank 0) or follows rank 0
# (`--rank r`, started by rank 0 itself). Leaves out every op (server.py and the modules it dispatches to).
from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
from typing import NoReturn

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies, so a `kill -9` of the Node trainer never leaves
    an engine holding GPU memory (prctl(2), PR_SET_PDEATHSIG). Elsewhere: end of stdin still ends it."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def guard_stdout():
    """The frame streams: a private copy of fds 0 and 1. Then fd 1 and sys.stdout point at stderr (so a
    stray print, a C library or a child process cannot corrupt a frame) and fd 0 at /dev/null."""
    frames_in = os.fdopen(os.dup(0), "rb", buffering=0)
    frames_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    return frames_in, frames_out


def quiet_libraries() -> None:
    # The engine reads local directories only: no Hub look-ups (a machine without network would hang in
    # retries), and no progress bars in the log.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m edgerl_torch", description="edgerl's PyTorch training engine")
    parser.add_argument("--processes", type=int, default=1, help="ranks under torch.distributed (default 1)")
    parser.add_argument("--backend", choices=("gloo", "nccl"), default=None, help="default: nccl on CUDA, else gloo")
    parser.add_argument(
        "--sharding",
        choices=("none", "fsdp"),
        default="none",
        help="none: the whole model on every rank; fsdp: base weights and adapter sharded over the ranks (FSDP2)",
    )
    parser.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)  # set by rank 0 for the others
    options = parser.parse_args(argv)
    if options.processes < 1:
        parser.error("--processes must be at least 1")
    if options.sharding == "fsdp" and options.processes < 2:
        parser.error("--sharding fsdp shards the model over several ranks: add --processes N with N >= 2")
    return options


def main(argv: list[str]) -> int:
    die_with_parent()
    options = parse(argv)
    frames_in, frames_out = guard_stdout()
    quiet_libraries()
    from .server import Server, follow, serve

    if options.rank > 0:
        from .distributed import join_as_follower

        world = join_as_follower(options.rank, options.processes, options.backend)
        return leave(follow(Server(world, options.sharding)))

    world = first_world(options.processes, options.backend, options.sharding)
    code = serve(frames_in, frames_out, Server(world, options.sharding))
    return leave(code) if world.size > 1 else code


def first_world(processes: int, backend: str | None, sharding: str):
    """Rank 0's world: several ranks when asked and the requirements are met; otherwise this process
    alone (then `hello` answers engine-requirements instead of a rank failing to start)."""
    from . import requirements
    from .world import SingleProcess

    if processes == 1:
        return SingleProcess()
    found = requirements.problems()
    if found:
        print(f"edgerl_torch: not starting {processes} ranks: {requirements.message(found)}", file=sys.stderr)
        return SingleProcess()
    from .distributed import start_ranks

    return start_ranks(processes, backend, sharding)


def leave(code: int) -> NoReturn:
    """A rank of several ends with os._exit, past the interpreter's teardown: there torch.distributed's
    C++ threads (gloo's, FSDP2's) can abort the process ("terminate called without an active exception",
    SIGABRT), seen once in six two-rank FSDP sessions, which rank 0 would take for a failed rank. Every
    reply is written by now (the frame stream is unbuffered) and rank 0 has waited for the others."""
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
