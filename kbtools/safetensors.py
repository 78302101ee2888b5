"""The safetensors format, read and written with numpy alone (no torch, no extra package).

Layout: 8-byte little-endian header length, a JSON header {name: {dtype, shape,
data_offsets}}, then the raw little-endian tensor bytes.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from engine.stages.rerank.errors import RerankUnavailable

_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}


def _bad(path: Path, what: str) -> RerankUnavailable:
    return RerankUnavailable("model-unreadable", str(path), what, "re-export the checkpoint as model.safetensors")


def read_safetensors(path: str | Path) -> dict[str, Any]:
    """Every tensor as a numpy array; BF16 widened to float32 exactly."""
    import numpy as np

    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise _bad(path, f"cannot read: {e.strerror}") from None
    if len(raw) < 8:
        raise _bad(path, "too short to be safetensors")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise _bad(path, f"header length {n} runs past the end of the file")
    try:
        header = json.loads(raw[8 : 8 + n])
    except ValueError as e:
        raise _bad(path, f"header is not JSON ({e})") from None
    data = memoryview(raw)[8 + n :]
    out: dict[str, Any] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (lo, hi) = meta["dtype"], tuple(meta["shape"]), meta["data_offsets"]
        if hi > len(data) or lo > hi:
            raise _bad(path, f"tensor {name} runs past the end of the file")
        if dtype == "BF16":
            u16 = np.frombuffer(data[lo:hi], dtype="<u2")
            arr = (u16.astype(np.uint32) << 16).view(np.float32)
        elif dtype in _DTYPES:
            arr = np.frombuffer(data[lo:hi], dtype=_DTYPES[dtype])
        else:
            raise _bad(path, f"tensor {name} has unsupported dtype {dtype}")
        if arr.size != int(np.prod(shape, dtype=np.int64)):
            raise _bad(path, f"tensor {name}: {arr.size} values for shape {list(shape)}")
        out[name] = arr.reshape(shape)
    return out


def write_safetensors(path: str | Path, tensors: dict[str, Any], metadata: dict[str, str] | None = None) -> None:
    """Write tensors (numpy arrays) atomically; used by the tests to make a checkpoint."""
    import numpy as np

    from engine.notes.atomic import write_atomic

    names = {v: k for k, v in _DTYPES.items()}
    header: dict[str, Any] = {}
    blobs: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name])
        key = np.dtype(arr.dtype).newbyteorder("<").str if arr.dtype.itemsize > 1 else arr.dtype.str
        code = names.get(key) or names.get(arr.dtype.str)
        if code is None:
            raise ValueError(f"{name}: dtype {arr.dtype} has no safetensors code")
        blob = arr.astype(_DTYPES[code], copy=False).tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = metadata
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the format aligns the data start to 8 bytes
    write_atomic(path, struct.pack("<Q", len(head)) + head + b"".join(blobs))
