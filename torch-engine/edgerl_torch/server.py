# Op dispatch: one request in, events and one reply out, every failure an error reply with its code
# (errors.py); the frame loop of rank 0 and the follow loop of the other ranks. No torch import at module
# level: `hello` must answer engine-requirements on a machine without torch. Leaves out the ops' work.
from __future__ import annotations

import math
import platform
import sys
import traceback
from importlib import import_module

from . import requirements
from .args import Args
from .errors import EngineError, bad_request, error_reply
from .protocol import (
    PROTOCOL_VERSION,
    BrokenStream,
    FrameError,
    parse_header,
    read_frame_bytes,
    tensor_views,
    write_frame,
)
from .session import Session


def _json_safe(value):
    """JSON has no NaN or infinity: a non-finite float (a loss sum of a diverged step) is sent as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return value


class Server:
    def __init__(self, world, sharding: str = "none") -> None:
        self.world = world
        self.sharding = sharding
        self.session = Session(world, sharding)
        self.problems = requirements.problems()
        self.stopping = False
        self.fatal: str | None = None  # set when the ranks can no longer agree: the engine exits 1

    # -- the ops, name → method; each returns (result, tensors out) --------------------------------

    def hello(self, args: Args, tensors, emit):
        protocol = args.raw("protocol")
        if protocol != PROTOCOL_VERSION:
            raise EngineError(
                "engine-protocol", f"this engine speaks protocol {PROTOCOL_VERSION}; the client asked for {protocol!r}"
            )
        self.ready()
        import torch

        versions = requirements.installed_versions()
        loaded = self.session.loaded
        return {
            "protocol": PROTOCOL_VERSION,
            "engine": "torch",
            "python": platform.python_version(),
            "torch": versions["torch"],
            "transformers": versions["transformers"],
            "peft": versions["peft"],
            "device": str(loaded.device) if loaded else ("cuda" if torch.cuda.is_available() else "cpu"),
            "world_size": self.world.size,
            "sharding": self.sharding,
        }, {}

    def load_model(self, args: Args, tensors, emit):
        model = self._module("model")
        fsdp = self.sharding == "fsdp"
        if fsdp:
            self._module("fsdp").check_available()
        self.session.drop_model()  # free the old weights before loading new ones

        def load():
            # Under FSDP in host memory: the model is sharded onto the device once its adapter exists
            # (Session.set_adapter), and loaded again for the next adapter (Session.drop_adapter).
            return model.load_model(args, local_rank=self.world.rank if self.world.size > 1 else 0, on_host=fsdp)

        loaded = load()
        self.session.set_model(loaded, reload=load if fsdp else None)
        return loaded.info, {}

    def adapter_create(self, args: Args, tensors, emit):
        return self._module("adapter").create_adapter(self.session, args), {}

    def adapter_load(self, args: Args, tensors, emit):
        return self._module("adapter").load_adapter(self.session, args), {}

    def optimizer_reset(self, args: Args, tensors, emit):
        return self._module("optimizer").reset_optimizer(self.session, args), {}

    def optimizer_load(self, args: Args, tensors, emit):
        return self._module("optimizer_state").load_optimizer_state(self.session, args.string("path")), {}

    def save(self, args: Args, tensors, emit):
        import torch

        adapter, optimizer_state = self._module("adapter"), self._module("optimizer_state")
        directory = args.string("dir")
        with_optimizer = args.boolean("optimizer", False)
        dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[
            args.string("dtype", "float32", ("float32", "bfloat16"))
        ]
        base_name = args.raw("base_model_name_or_path", None)
        if base_name is not None and not isinstance(base_name, str):
            raise bad_request(f"save.base_model_name_or_path must be a string or null, got {base_name!r}")
        self.session.require_adapter()
        if with_optimizer:
            self.session.require_optimizer()
        # Unsharded, the ranks hold identical adapters and rank 0 alone writes them. Sharded, every rank
        # takes part in gathering each whole tensor from the shards, then rank 0 writes.
        if self.world.rank != 0 and self.session.root is None:
            return {}, {}
        state = adapter.adapter_state(self.session, dtype)
        moments = optimizer_state.optimizer_moments(self.session) if with_optimizer else None
        if self.world.rank != 0:
            return {}, {}
        files = adapter.save_adapter(self.session, directory, dtype, base_name, state)
        if moments is not None:
            files.append(optimizer_state.save_optimizer_state(self.session, directory, moments))
        return {"files": files}, {}

    def step(self, args: Args, tensors, emit):
        return self._module("step").train_step(self.session, args, tensors, emit), {}

    def logprobs(self, args: Args, tensors, emit):
        return self._module("logprobs").sequence_logprobs(self.session, args, tensors)

    def predict(self, args: Args, tensors, emit):
        return self._module("predict").predict(self.session, args, tensors)

    def memory(self, args: Args, tensors, emit):
        return self._module("memory").memory(self.session), {}

    def shutdown(self, args: Args, tensors, emit):
        self.stopping = True
        return {}, {}

    OPS = {
        "hello": hello,
        "load-model": load_model,
        "adapter-create": adapter_create,
        "adapter-load": adapter_load,
        "optimizer-reset": optimizer_reset,
        "optimizer-load": optimizer_load,
        "save": save,
        "step": step,
        "logprobs": logprobs,
        "predict": predict,
        "memory": memory,
        "shutdown": shutdown,
    }

    # -- dispatch ----------------------------------------------------------------------------------

    def ready(self) -> None:
        if self.problems:
            raise EngineError("engine-requirements", requirements.message(self.problems))

    def _module(self, name: str):
        """An op's module, imported on first use (they import torch); a broken install is engine-requirements."""
        self.ready()
        try:
            return import_module(f".{name}", __package__)
        except ImportError as error:
            raise EngineError(
                "engine-requirements", f"importing the engine failed ({error}). To fix it, {requirements.FIX}."
            ) from error

    def handle(self, raw_header: bytes, payload: bytearray, emit) -> tuple[dict, dict]:
        """The reply (header, torch tensors) to one frame; `emit(id, event, data)` sends events before it."""
        request_id = op = failure = None
        result, out = {}, {}
        try:
            header = parse_header(raw_header)
            request_id = header.get("id")
            op = header.get("op")
            if op not in self.OPS:
                raise bad_request(f"unknown op {op!r}; one of {', '.join(self.OPS)}")
            views = tensor_views(header, payload)
            args = Args(header.get("args"), op)
            result, out = self.OPS[op](self, args, views, lambda event, data: emit(request_id, event, data))
        except Exception as error:  # every failure of an op is a reply; the engine keeps serving
            failure = ("engine-bad-request", str(error)) if isinstance(error, FrameError) else error_reply(error)
            if failure[0] == "engine-internal":
                traceback.print_exc(file=sys.stderr)
            if failure[0] == "engine-out-of-memory":
                _release_cached_memory()
        failure = self._agree(op, failure)
        if failure is not None:
            return {"id": request_id, "ok": False, "error": {"code": failure[0], "message": failure[1]}}, {}
        return {"id": request_id, "ok": True, "result": _json_safe(result)}, out

    # What every rank undoes when an op succeeded on some ranks and failed on others, so that all hold the
    # same state again (the failed ranks too: a failure can come before or after their state changed).
    ROLL_BACK = {
        "load-model": Session.drop_model,
        "adapter-create": Session.drop_adapter,
        "adapter-load": Session.drop_adapter,
        "optimizer-reset": Session.drop_optimizer,
        "optimizer-load": Session.drop_optimizer,
    }

    def _agree(self, op, failure: tuple[str, str] | None) -> tuple[str, str] | None:
        """One outcome for every rank: an op that failed on any rank failed on all. When only some failed,
        every rank rolls back to the same state; where that is impossible (a step applied on some ranks
        only) the adapters differ and every rank stops after the reply."""
        outcomes = self.world.outcomes(failure)
        failed = [rank for rank, outcome in enumerate(outcomes) if outcome is not None]
        if not failed:
            return None
        rank, (code, message) = failed[0], outcomes[failed[0]]
        if len(failed) < len(outcomes):  # mixed; every rank sees the same list, so all act alike
            if op in self.ROLL_BACK:
                try:
                    self.ROLL_BACK[op](self.session)
                except Exception:  # under FSDP dropping an adapter reloads the base, which can fail too
                    traceback.print_exc(file=sys.stderr)
                    self.session.drop_model()
            elif op == "step":
                self.fatal = f"rank {rank} failed a step that other ranks applied: the adapters differ"
        return code, message if rank == self.world.rank else f"rank {rank}: {message}"


def _release_cached_memory() -> None:
    """After an OOM the allocator's cache holds the failed op's blocks; give them back so the next op can run."""
    import gc

    gc.collect()
    if "torch" in sys.modules:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _send(stream, header: dict, tensors: dict) -> None:
    encoded = None
    if tensors:
        from .tensors import from_torch

        encoded = {name: from_torch(tensor) for name, tensor in tensors.items()}
    write_frame(stream, header, encoded)


def serve(frames_in, frames_out, server: Server) -> int:
    """Rank 0's loop: frames in, replies out, until `shutdown` (0), end of input (0) or a broken stream (1)."""
    world = server.world

    def emit(request_id, event, data):
        write_frame(frames_out, {"id": request_id, "event": event, "data": _json_safe(data)})

    while True:
        try:
            raw = read_frame_bytes(frames_in)
        except BrokenStream as error:
            print(f"edgerl_torch: {error}; exiting", file=sys.stderr, flush=True)
            _stop(world, announce=True)
            return 1
        if raw is None:
            _stop(world, announce=True)
            return 0
        if world.size > 1:
            world.broadcast_request(*raw)
        header, tensors = server.handle(*raw, emit)
        _send(frames_out, header, tensors)
        if server.fatal:  # every rank saw it and exits by itself
            print(f"edgerl_torch: {server.fatal}; exiting", file=sys.stderr, flush=True)
            _stop(world, announce=False)
            return 1
        if server.stopping:
            _stop(world, announce=False)
            return 0


def follow(server: Server) -> int:
    """The loop of ranks > 0: rank 0's requests, handled in step with it; replies and events dropped."""
    while True:
        raw = server.world.receive_request()
        if raw is None:
            return 0
        server.handle(*raw, lambda *_: None)
        if server.fatal:
            return 1
        if server.stopping:
            return 0


def _stop(world, announce: bool) -> None:
    if world.size > 1:
        from .distributed import stop_ranks

        stop_ranks(world, announce)
