"""Helpers shared by the suite's Python test peers (no DDS in here).

Output convention of every peer: one JSON object per line on stdout, each with a "kind" key;
diagnostics go to stderr. A failing peer prints {"kind": "error", "reason": ...} and exits 1.
Non-finite floats are written as the strings "nan", "inf" and "-inf" (JSON has no NaN).
"""

from __future__ import annotations

import array
import dataclasses
import json
import math
import os
import sys
import threading
import time
from typing import Any, NoReturn

EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_WATCHDOG = 124


def plain(value: Any) -> Any:
    """Converts a decoded message of any of our libraries into JSON-ready data.

    Handles rclpy messages, rosbags and cyclonedds dataclasses, mcap_ros2's dynamic classes,
    numpy and array.array arrays, bytes, and non-finite floats (as strings).
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return list(bytes(value))
    if isinstance(value, array.array):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist) and type(value).__module__.startswith("numpy"):
        return plain(tolist())
    fields_fn = getattr(type(value), "get_fields_and_field_types", None)  # rclpy
    if callable(fields_fn):
        return {k: plain(getattr(value, k)) for k in fields_fn()}
    # rosidl field names are lower case and constant names upper case: constants that a
    # library keeps beside the fields (rosbags does) are not part of the message.
    if dataclasses.is_dataclass(value):  # rosbags, cyclonedds
        return {
            f.name: plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_") and not f.name.isupper()
        }
    slots = getattr(type(value), "__slots__", None)  # mcap_ros2 dynamic classes
    if slots:
        return {
            k: plain(getattr(value, k)) for k in slots if not k.startswith("_") and not k.isupper()
        }
    if hasattr(value, "__dict__"):
        return {k: plain(v) for k, v in vars(value).items() if not k.startswith("_")}
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")


def emit(kind: str, **fields: Any) -> None:
    """Prints one JSON record (a line) on stdout and flushes it."""
    record = {"kind": kind}
    record.update(fields)
    # Default separators (", " and ": "): the Rust harness reads these lines with a YAML parser,
    # and YAML 1.1 parsers want a space after a colon.
    sys.stdout.write(json.dumps(plain(record), allow_nan=False) + "\n")
    sys.stdout.flush()


def log(msg: str) -> None:
    """A diagnostic line on stderr."""
    sys.stderr.write(f"[{os.path.basename(sys.argv[0])}] {msg}\n")
    sys.stderr.flush()


def fail(reason: str, **fields: Any) -> NoReturn:
    """Reports a failure as an "error" record and exits with status 1."""
    emit("error", reason=reason, **fields)
    log(f"error: {reason}")
    sys.stdout.flush()
    sys.exit(EXIT_FAIL)


class Deadline:
    """A point in time (monotonic) a peer must finish by."""

    def __init__(self, seconds: float):
        self.start = time.monotonic()
        self.end = self.start + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.end

    def elapsed(self) -> float:
        return time.monotonic() - self.start


def start_watchdog(seconds: float, grace: float = 10.0) -> None:
    """Ends the process hard if it is still running `seconds + grace` from now.

    The peers check their own deadline; this is the backstop for a library call that hangs
    (discovery, shutdown), so that a test is always bounded.
    """

    def bite() -> None:
        try:
            emit("error", reason=f"watchdog: still running {seconds + grace:.1f} s after start")
        finally:
            os._exit(EXIT_WATCHDOG)

    t = threading.Timer(seconds + grace, bite)
    t.daemon = True
    t.start()


def require_private_netns() -> None:
    """Exits (status 2) unless this process sits in a network namespace whose only interface
    is loopback: DDS traffic of the suite's tests never leaves loopback (../shared/netns-run)."""
    # /proc/self/net follows the reader's network namespace; /sys/class/net does not (it shows
    # the namespace of whoever mounted sysfs, i.e. the host's, inside netns-run).
    try:
        with open("/proc/self/net/dev", encoding="ascii") as f:
            ifaces = sorted(line.split(":", 1)[0].strip() for line in f.readlines()[2:])
    except OSError:
        ifaces = []
    if ifaces != ["lo"]:
        emit("error", reason="refusing to open DDS sockets outside a private loopback-only network "
             f"namespace (interfaces: {ifaces}); run me through ../shared/netns-run")
        log("not in a private loopback-only network namespace: run me through ../shared/netns-run")
        sys.exit(EXIT_USAGE)


def parse_floats(text: str) -> list[float]:
    """'1,2.5,-3' -> [1.0, 2.5, -3.0]; '' -> []. Accepts nan/inf spellings."""
    text = text.strip()
    if not text:
        return []
    try:
        return [float(x) for x in text.split(",")]
    except ValueError as e:
        raise ValueError(f"not a comma-separated list of numbers: {text!r}") from e


def parse_names(text: str) -> list[str]:
    """'a,b,c' -> ['a', 'b', 'c']; '' -> []."""
    text = text.strip()
    return [x.strip() for x in text.split(",")] if text else []


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]) of an ascending list."""
    if not sorted_values:
        raise ValueError("percentile of an empty list")
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def latency_summary(rtts_s: list[float]) -> dict[str, float]:
    """min/median/p99/mean/max of round-trip times, in microseconds."""
    v = sorted(x * 1e6 for x in rtts_s)
    n = len(v)
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    return {
        "min_us": round(v[0], 1),
        "median_us": round(median, 1),
        "p99_us": round(percentile(v, 99.0), 1),
        "mean_us": round(sum(v) / n, 1),
        "max_us": round(v[-1], 1),
    }
