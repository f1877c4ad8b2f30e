# Framing (edgerl_torch/protocol.py) against frames built and read by hand with struct, as
# docs/torch-engine.md "Frames" specifies them: lengths, 8-byte tensor offsets, odd sizes, broken streams.
import io
import json
import struct
import unittest

from edgerl_torch.protocol import BrokenStream, FrameError, encode_frame, read_frame, tensor_views


def hand_frame(header: dict, payload: bytes) -> bytes:
    raw = json.dumps(header).encode("utf-8")
    return struct.pack("<II", len(raw), len(payload)) + raw + payload


class FramingTest(unittest.TestCase):
    def test_encoded_frame_is_the_documented_layout(self):
        ints = struct.pack("<3i", 7, -1, 2**31 - 1)
        odd = bytes([1, 2, 3, 4, 5])
        floats = struct.pack("<6f", *[0.5 * i for i in range(6)])
        frame = encode_frame(
            {"id": 3, "ok": True},
            {
                "a": ("int32", (3,), ints),
                "b": ("uint8", (5,), odd),
                "c": ("float32", (2, 3), floats),
                "empty": ("uint8", (0,), b""),
                "one": ("uint8", (1,), b"\x09"),
            },
        )
        header_length, payload_length = struct.unpack_from("<II", frame)
        header = json.loads(frame[8 : 8 + header_length])
        payload = frame[8 + header_length :]
        self.assertEqual(len(payload), payload_length)
        table = header["tensors"]
        # a at 0 (12 bytes), b at 16 (5 bytes, padded to 24), c at 24, empty at 48, one at 48.
        self.assertEqual([table[k]["offset"] for k in "abc"], [0, 16, 24])
        for name, data in (("a", ints), ("b", odd), ("c", floats), ("one", b"\x09")):
            offset = table[name]["offset"]
            self.assertEqual(offset % 8, 0, name)
            self.assertEqual(payload[offset : offset + len(data)], data, name)
        self.assertEqual(table["c"], {"dtype": "float32", "shape": [2, 3], "offset": 24})

    def test_round_trip_of_odd_sizes(self):
        for sizes in ([1], [3, 5, 7], [0, 9], [13, 1, 2]):
            tensors = {f"t{i}": ("uint8", (n,), bytes(range(n))) for i, n in enumerate(sizes)}
            tensors["f"] = ("float32", (3,), struct.pack("<3f", 1.5, -2.25, 3.0))
            stream = io.BytesIO(encode_frame({"id": 1, "op": "x", "args": {"k": "é"}}, tensors))
            frame = read_frame(stream)
            self.assertEqual(frame.header["args"], {"k": "é"})
            views = tensor_views(frame.header, frame.payload)
            for i, n in enumerate(sizes):
                self.assertEqual(bytes(views[f"t{i}"].data), bytes(range(n)))
            self.assertEqual(struct.unpack("<3f", views["f"].data), (1.5, -2.25, 3.0))
            self.assertIsNone(read_frame(stream))  # a clean end after the last frame

    def test_reads_a_hand_built_frame_with_an_odd_header_length(self):
        payload = struct.pack("<2i", 4, 5)
        frame = hand_frame(
            {
                "id": 9,
                "op": "logprobs",
                "tensors": {"lengths": {"dtype": "int32", "shape": [2], "offset": 0}},
                "x": "abc",
            },
            payload,
        )
        stream = io.BytesIO(frame + frame)
        for _ in range(2):
            got = read_frame(stream)
            self.assertEqual(got.header["id"], 9)
            self.assertEqual(struct.unpack("<2i", tensor_views(got.header, got.payload)["lengths"].data), (4, 5))

    def test_end_of_input_inside_a_frame_is_a_broken_stream(self):
        frame = hand_frame({"id": 1, "op": "hello"}, b"12345678")
        for cut in (3, 8, 12, len(frame) - 1):
            with self.subTest(cut=cut), self.assertRaises(BrokenStream):
                read_frame(io.BytesIO(frame[:cut]))

    def test_malformed_frames_are_frame_errors_not_broken_streams(self):
        raw = b"{not json"
        with self.assertRaises(FrameError):
            read_frame(io.BytesIO(struct.pack("<II", len(raw), 0) + raw))
        bad_tables = {
            "misaligned": {"dtype": "int32", "shape": [1], "offset": 4},
            "beyond": {"dtype": "int32", "shape": [3], "offset": 0},
            "dtype": {"dtype": "float64", "shape": [1], "offset": 0},
            "shape": {"dtype": "uint8", "shape": [-1], "offset": 0},
        }
        for name, spec in bad_tables.items():
            with self.subTest(name), self.assertRaises(FrameError) as caught:
                tensor_views({"id": 5, "tensors": {name: spec}}, bytearray(8))
            self.assertIn(name, str(caught.exception))
            self.assertEqual(caught.exception.request_id, 5)


if __name__ == "__main__":
    unittest.main()
