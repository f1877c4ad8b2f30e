# Test helpers: a client that drives `python -m edgerl_torch` over its stdin/stdout like the trainer does,
# the tiny model directories edgerl's own CLI writes, and comparisons that report the largest difference.
from __future__ import annotations

import atexit
import functools
import io
import os
import shutil
import subprocess
import sys
import tempfile

import torch

from edgerl_torch.protocol import encode_frame, read_frame, tensor_views
from edgerl_torch.tensors import from_torch, to_torch

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENGINE_PATH = os.path.join(REPO, "torch-engine")


def scratch_dir(prefix: str) -> str:
    path = tempfile.mkdtemp(prefix=f"edgerl-torch-{prefix}-")
    atexit.register(shutil.rmtree, path, True)
    return path


@functools.cache
def tiny_model_dir(arch: str = "qwen2") -> str:
    """A real Hugging Face model directory with random weights (hidden 64, 2 layers), written by
    `edgerl model init --preset tiny`, once per test run."""
    out = os.path.join(scratch_dir(f"model-{arch}"), "model")
    command = ["node", "bin/edgerl.js", "model", "init", "--out", out, "--preset", "tiny"]
    if arch != "qwen2":
        command += ["--arch", arch]
    subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return out


def engine_env(extra: dict | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": ENGINE_PATH + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return {**env, **(extra or {})}


class Engine:
    """One engine process; `call` sends a request and returns (reply header, tensors, events)."""

    def __init__(self, *flags: str, env: dict | None = None, python_flags: tuple[str, ...] = ()) -> None:
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, *python_flags, "-m", "edgerl_torch", *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env or engine_env(),
        )
        self.next_id = 0

    @classmethod
    def attach(cls, process: subprocess.Popen) -> Engine:
        """A client for an engine some other process started, on that process's pipes."""
        engine = cls.__new__(cls)
        engine.process, engine.next_id, engine.log = process, 0, tempfile.TemporaryFile()
        return engine

    def send_raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def read(self):
        frame = read_frame(self.process.stdout)
        if frame is None:
            raise EOFError(f"the engine closed its stdout; its log:\n{self.stderr()}")
        views = tensor_views(frame.header, frame.payload)
        return frame.header, {name: to_torch(view).clone() for name, view in views.items()}

    def call(self, op: str, args: dict | None = None, tensors: dict | None = None):
        self.next_id += 1
        request_id = self.next_id
        encoded = {name: from_torch(tensor) for name, tensor in (tensors or {}).items()}
        self.send_raw(encode_frame({"id": request_id, "op": op, "args": args or {}}, encoded))
        events = []
        while True:
            header, out = self.read()
            if header.get("id") != request_id:
                raise AssertionError(f"reply id {header.get('id')} for request {request_id}")
            if "event" in header:
                events.append(header)
                continue
            return header, out, events

    def ok(self, op: str, args: dict | None = None, tensors: dict | None = None):
        """The result and tensors of a request that must succeed."""
        header, out, _ = self.call(op, args, tensors)
        if not header["ok"]:
            raise AssertionError(f"{op} failed: {header['error']}\nengine log:\n{self.stderr()}")
        return header["result"], out

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def close(self) -> int:
        """Ends input (the engine exits 0 on it), waits, and frees the pipes and the log."""
        if not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.log.close()
        return self.process.returncode


def flat(sequences: list[list[int]]) -> dict:
    """lengths and ids of the protocol's flat layout."""
    return {
        "lengths": torch.tensor([len(s) for s in sequences], dtype=torch.int32),
        "ids": torch.tensor([i for s in sequences for i in s], dtype=torch.int32),
    }


def largest_difference(actual: torch.Tensor, expected: torch.Tensor) -> tuple[float, int]:
    difference = (actual.detach().double() - expected.detach().double()).abs().reshape(-1)  # [n]
    where = int(difference.argmax()) if difference.numel() else -1
    return (float(difference.max()) if difference.numel() else 0.0), where


def in_process(model_dir: str, load: dict | None = None, lora: dict | None = None, seed: int = 1):
    """A Server in this process with the model loaded and (when `lora` is given) an adapter made."""
    from edgerl_torch.args import Args
    from edgerl_torch.server import Server
    from edgerl_torch.world import SingleProcess

    server = Server(SingleProcess())
    server.load_model(Args({"model_dir": model_dir, **(load or {})}, "load-model"), {}, None)
    if lora is not None:
        server.adapter_create(Args({"lora": lora, "seed": seed}, "adapter-create"), {}, None)
    return server


def randomise_b(peft, seed: int = 7, std: float = 0.2) -> None:
    """B ≠ 0, so the adapter changes the model's outputs (a new adapter is a no-op: B = 0)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in peft.named_parameters():
            if ".lora_B." in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * std)


def views(tensors: dict) -> dict:
    """Protocol TensorViews of torch tensors, as a request's payload would carry them."""
    frame = read_frame(io.BytesIO(encode_frame({}, {k: from_torch(v) for k, v in tensors.items()})))
    return tensor_views(frame.header, frame.payload)
