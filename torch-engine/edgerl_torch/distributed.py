# Several ranks under torch.distributed, data-parallel: rank 0 starts the others, alone speaks the
# protocol, and broadcasts every request's bytes to them over a gloo group; ops deal micro-batches
# round-robin and meet in the collectives below. One rank is the same interface with no communication.
# Leaves out sharding the model (--sharding fsdp: fsdp.py, when session.py says).
from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
import threading

import torch
import torch.distributed as dist

from .errors import EngineError, error_reply
from .world import SingleProcess

# The control group waits for the next request between ops, and a trainer may sit idle for hours
# (rollouts, scoring) before it sends one: gloo's default 30-minute timeout would end the ranks.
CONTROL_TIMEOUT = datetime.timedelta(days=30)


class ProcessGroup(SingleProcess):
    """One rank of several. Collectives on tensors use the default group (NCCL on GPUs, gloo on CPUs);
    control messages (requests, small sums, Python objects) use a gloo group, which works under both."""

    def __init__(self, rank: int, size: int, control) -> None:
        self.rank = rank
        self.size = size
        self.control = control

    def share(self, plan: list) -> list[tuple[int, list[int]]]:
        # Round-robin: micro-batch i on rank i mod size. The trainer plans micro-batches of similar
        # padded size (longest first), so neighbours cost about the same.
        return [(i, members) for i, members in enumerate(plan) if i % self.size == self.rank]

    def gather(self, items: list) -> list | None:
        """Every rank's items, concatenated in rank order, on rank 0; None elsewhere."""
        out = [None] * self.size if self.rank == 0 else None
        dist.gather_object(list(items), out, dst=0, group=self.control)
        if self.rank != 0:
            return None
        return [item for part in out for item in part]

    def sum_ints(self, values: list[int]) -> list[int]:
        tensor = torch.tensor(values, dtype=torch.int64)  # [n]
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=self.control)
        return tensor.tolist()

    def sum_gradients(self, parameters: list) -> None:
        """ONE all-reduce (SUM) of every adapter gradient laid end to end. A sum, not DDP's mean: each
        micro-batch's loss was already divided by the whole step's normaliser (its trained tokens or
        sequences, losses.py), so each rank holds its share of the step's gradient, and the shares add up
        to exactly the one-process gradient. Averaging would divide it by the number of ranks."""
        flat = torch.cat([p.grad.reshape(-1) for p in parameters])  # [P]
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        offset = 0
        for p in parameters:
            n = p.grad.numel()
            p.grad.copy_(flat[offset : offset + n].view_as(p.grad))  # [P] slice → the gradient's shape
            offset += n

    def broadcast_parameters(self, parameters: list) -> None:
        for p in parameters:
            # Host tensors (a model not yet sharded, --sharding fsdp) over gloo: NCCL moves device memory only.
            group = self.control if p.device.type == "cpu" else None
            with torch.no_grad():
                dist.broadcast(p.data, src=0, group=group)

    def raise_first(self, error: BaseException | None) -> None:
        """Every rank learns whether any failed; all raise the first failure, so all skip what follows."""
        outcomes = self.outcomes(None if error is None else error_reply(error))
        rank = next((rank for rank, outcome in enumerate(outcomes) if outcome is not None), None)
        if rank is None:
            return
        if rank == self.rank:
            raise error
        code, message = outcomes[rank]
        raise EngineError(code, f"rank {rank}: {message}")

    def outcomes(self, failure: tuple[str, str] | None) -> list[tuple[str, str] | None]:
        """Every rank's (code, message) or None, in rank order, the same list on every rank."""
        everyone = [None] * self.size
        dist.all_gather_object(everyone, failure, group=self.control)
        return everyone

    def broadcast_request(self, header: bytes | None, payload: bytes = b"") -> None:
        """Rank 0: the request's bytes to every other rank; None announces the end."""
        lengths = torch.tensor([-1, 0] if header is None else [len(header), len(payload)], dtype=torch.int64)
        dist.broadcast(lengths, src=0, group=self.control)
        if header is not None and len(header) + len(payload) > 0:
            data = torch.frombuffer(bytearray(header) + payload, dtype=torch.uint8)  # [H + P]
            dist.broadcast(data, src=0, group=self.control)

    def receive_request(self) -> tuple[bytes, bytearray] | None:
        """Ranks > 0: the next request's header and payload bytes; None at the end."""
        lengths = torch.zeros(2, dtype=torch.int64)
        dist.broadcast(lengths, src=0, group=self.control)
        header_length, payload_length = (int(n) for n in lengths)
        if header_length < 0:
            return None
        data = torch.empty(header_length + payload_length, dtype=torch.uint8)  # [H + P]
        if header_length + payload_length > 0:
            dist.broadcast(data, src=0, group=self.control)
        raw = data.numpy().tobytes()
        return raw[:header_length], bytearray(raw[header_length:])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _join(rank: int, size: int, backend: str | None) -> ProcessGroup:
    """init_process_group from the environment (MASTER_ADDR/PORT, RANK, WORLD_SIZE) plus the control group."""
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
    else:
        # One core set per rank: without this every rank starts a thread per core and they fight.
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // size))
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=size)
    control = dist.new_group(backend="gloo", timeout=CONTROL_TIMEOUT)
    return ProcessGroup(rank, size, control)


def start_ranks(size: int, backend: str | None, sharding: str) -> ProcessGroup:
    """Rank 0: starts ranks 1..size−1 as `python -m edgerl_torch --rank r` and joins them. A rank that
    exits while the engine runs ends the engine (its collectives could never complete)."""
    if torch.cuda.is_available() and size > torch.cuda.device_count():
        # Each rank takes cuda:LOCAL_RANK; more ranks than GPUs would fail inside torch.distributed.
        print(
            f"edgerl_torch: --processes {size} needs {size} GPUs, torch sees {torch.cuda.device_count()}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(1)
    port = _free_port()
    # torch.distributed's env:// rendezvous reads these; rank 0 is this process.
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": str(size)})
    os.environ.update({"RANK": "0", "LOCAL_RANK": "0"})
    command = [sys.executable, "-m", "edgerl_torch", "--processes", str(size), "--sharding", sharding]
    if backend is not None:
        command += ["--backend", backend]
    children = []
    for rank in range(1, size):
        env = {**os.environ, "RANK": str(rank), "LOCAL_RANK": str(rank)}
        # stdout → our stderr: only rank 0's stdout carries frames.
        children.append(
            subprocess.Popen(
                command + ["--rank", str(rank)], env=env, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno()
            )
        )
    world = _join(0, size, backend)
    world.children = children
    for child in children:
        threading.Thread(target=_watch, args=(child,), daemon=True).start()
    return world


def _watch(child: subprocess.Popen) -> None:
    # A rank exits 0 only when rank 0 told it to (shutdown, end of input); any other end is a failure.
    code = child.wait()
    if code != 0:
        print(
            f"edgerl_torch: rank process {child.pid} exited with {code}; the engine stops", file=sys.stderr, flush=True
        )
        os._exit(1)


def stop_ranks(world: ProcessGroup, announce: bool) -> None:
    """Rank 0 at the end: tell the others (unless they already saw `shutdown`), wait for them."""
    if announce:
        world.broadcast_request(None)
    for child in getattr(world, "children", []):
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()


def join_as_follower(rank: int, size: int, backend: str | None) -> ProcessGroup:
    return _join(rank, size, backend)
