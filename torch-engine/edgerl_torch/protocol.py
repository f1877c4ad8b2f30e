# The engine's frames (docs/torch-engine.md "Frames"): two little-endian u32 lengths, a UTF-8 JSON
# header, a payload of raw tensor bytes. Standard library only (no torch, no numpy), so a machine
# without torch can still answer `hello` with engine-requirements. Leaves out what the ops mean.
from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import BinaryIO

PROTOCOL_VERSION = 1

# dtype name → (struct/array item size in bytes). The doc allows exactly these three.
DTYPE_SIZES = {"int32": 4, "float32": 4, "uint8": 1}

# A header larger than this is taken as a corrupt length rather than a real request: headers hold
# args and tensor descriptions, never tensor data, so even a 100k-sequence batch stays far below it.
MAX_HEADER_BYTES = 64 * 1024 * 1024

_LENGTHS = struct.Struct("<II")


class BrokenStream(Exception):
    """The byte stream cannot be framed any more (EOF inside a frame, absurd lengths): the engine exits."""


class FrameError(Exception):
    """One frame is readable but malformed (bad JSON, bad tensor table): answered, the stream goes on."""

    def __init__(self, message: str, request_id: object = None) -> None:
        super().__init__(message)
        self.request_id = request_id


@dataclass(frozen=True)
class TensorView:
    """A tensor as it lies in a payload: no copy; tensors.py turns it into a torch tensor."""

    dtype: str
    shape: tuple[int, ...]
    data: memoryview  # exactly the tensor's bytes

    @property
    def count(self) -> int:
        n = 1
        for size in self.shape:
            n *= size
        return n


@dataclass(frozen=True)
class Frame:
    header: dict
    payload: bytearray


def _read_exactly(stream: BinaryIO, size: int, at_boundary: bool) -> bytes | None:
    """`size` bytes, or None on a clean EOF before the first byte when `at_boundary`."""
    chunks = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            if at_boundary and remaining == size:
                return None
            raise BrokenStream(f"end of input inside a frame ({size - remaining} of {size} bytes read)")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame_bytes(stream: BinaryIO) -> tuple[bytes, bytearray] | None:
    """The next frame's raw header and payload bytes; None at a clean end of input."""
    lengths = _read_exactly(stream, _LENGTHS.size, at_boundary=True)
    if lengths is None:
        return None
    header_length, payload_length = _LENGTHS.unpack(lengths)
    if header_length > MAX_HEADER_BYTES:
        raise BrokenStream(f"header length {header_length} exceeds {MAX_HEADER_BYTES}: not a frame stream")
    header = _read_exactly(stream, header_length, at_boundary=False) or b""
    # bytearray: writable, so torch.frombuffer can view it without a copy or a warning.
    payload = bytearray(_read_exactly(stream, payload_length, at_boundary=False) or b"")
    return header, payload


def parse_header(raw: bytes) -> dict:
    """The header's JSON object; FrameError (with the id when one can be read) otherwise."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FrameError(f"the header is not UTF-8 JSON: {error}") from error
    if not isinstance(header, dict):
        raise FrameError("the header is not a JSON object")
    return header


def read_frame(stream: BinaryIO) -> Frame | None:
    raw = read_frame_bytes(stream)
    if raw is None:
        return None
    return Frame(parse_header(raw[0]), raw[1])


def tensor_views(header: dict, payload: bytearray) -> dict[str, TensorView]:
    """The header's tensor table, checked against the payload (dtype, shape, 8-byte offsets, bounds)."""
    table = header.get("tensors", {})
    if table is None:
        return {}
    request_id = header.get("id")
    if not isinstance(table, dict):
        raise FrameError('"tensors" must be an object of name → {dtype, shape, offset}', request_id)
    view = memoryview(payload)
    out: dict[str, TensorView] = {}
    for name, spec in table.items():
        where = f'tensor "{name}"'
        if not isinstance(spec, dict):
            raise FrameError(f"{where}: must be an object with dtype, shape and offset", request_id)
        dtype = spec.get("dtype")
        if dtype not in DTYPE_SIZES:
            raise FrameError(f"{where}: dtype must be one of {', '.join(DTYPE_SIZES)}, got {dtype!r}", request_id)
        shape = spec.get("shape")
        if not isinstance(shape, list) or not all(
            isinstance(size, int) and not isinstance(size, bool) and size >= 0 for size in shape
        ):
            raise FrameError(f"{where}: shape must be a list of integers >= 0, got {shape!r}", request_id)
        offset = spec.get("offset")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0 or offset % 8 != 0:
            raise FrameError(f"{where}: offset must be an integer >= 0 and a multiple of 8, got {offset!r}", request_id)
        count = 1
        for size in shape:
            count *= size
        nbytes = count * DTYPE_SIZES[dtype]
        if offset + nbytes > len(payload):
            raise FrameError(
                f"{where}: bytes {offset}..{offset + nbytes} lie beyond the payload's {len(payload)}", request_id
            )
        out[name] = TensorView(dtype, tuple(shape), view[offset : offset + nbytes])
    return out


def encode_frame(header: dict, tensors: dict[str, tuple[str, tuple[int, ...], bytes]] | None = None) -> bytes:
    """A frame from a header and tensors given as (dtype, shape, little-endian C-order bytes).

    Each tensor starts at a multiple of 8 bytes (zero filler between), as the doc requires, so a reader
    can view int32/float32 data in place.
    """
    payload = bytearray()
    if tensors:
        table = {}
        for name, (dtype, shape, data) in tensors.items():
            if dtype not in DTYPE_SIZES:
                raise ValueError(f'tensor "{name}": unsupported dtype {dtype}')
            padding = (-len(payload)) % 8
            payload.extend(b"\0" * padding)
            table[name] = {"dtype": dtype, "shape": list(shape), "offset": len(payload)}
            payload.extend(data)
        header = {**header, "tensors": table}
    # allow_nan=False would reject a NaN loss sum; JSON has no NaN, so non-finite floats are written
    # as null by the caller (server.py), and a stray one here is a bug worth failing on.
    raw = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return _LENGTHS.pack(len(raw), len(payload)) + raw + bytes(payload)


def write_frame(stream: BinaryIO, header: dict, tensors=None) -> None:
    stream.write(encode_frame(header, tensors))
    stream.flush()
