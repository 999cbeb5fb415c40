#!/usr/bin/env python3
"""Opens a rosbag2 MCAP bag with two independent third-party readers and checks they agree.

    python bag_check.py BAG_DIR_OR_MCAP [--expect TOPIC=COUNT ...] [--allow-unknown-types]

Readers: `rosbags` (AnyReader, with the Jazzy type store plus msg/msg/*.msg as default types)
and `mcap-ros2-support` (mcap_ros2.reader.read_ros2_messages). Every message is decoded by both.
Fails (exit 1, {"kind": "error", "problems": [...]}) when:
  - either reader cannot open the bag or decode a message;
  - the readers disagree on topics, types, counts or any decoded value;
  - metadata.yaml (bag directories) counts differ from the messages found;
  - the MCAP is not profile ros2 / schema encoding ros2msg / message encoding cdr;
  - a type's embedded definition differs from the real ROS 2 Jazzy (or msg/) definition, field
    names, types and order, or its RIHS01 hash differs (unless --allow-unknown-types and the
    type is unknown);
  - an --expect TOPIC=COUNT is not met.
Output, one JSON line each: {"kind": "topic", "topic", "type", "count", "count_mcap",
"count_metadata", "rihs01", "first_time_ns", "last_time_ns", "first", "last"} per topic, then
{"kind": "summary", "ok", "path", "topics", "messages"}. Opens no sockets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bag_common import mcap_files, reference_typestore  # noqa: E402
from peer_common import emit, fail, plain  # noqa: E402


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, allow_nan=False).encode()).hexdigest()


class TopicData:
    def __init__(self, msgtype: str):
        self.msgtype = msgtype
        self.entries: list[tuple[int, str]] = []  # (log time ns, digest of decoded value)
        self.first: Any = None
        self.last: Any = None

    def add(self, t: int, value: Any) -> None:
        if self.first is None:
            self.first = value
        self.last = value
        self.entries.append((t, digest(value)))


def read_rosbags(path: Path, store: Any, problems: list[str]) -> tuple[dict[str, TopicData], dict[str, int], dict[str, str], Any]:
    from rosbags.highlevel import AnyReader

    topics: dict[str, TopicData] = {}
    meta_counts: dict[str, int] = {}
    digests: dict[str, str] = {}
    with AnyReader([path], default_typestore=store) as reader:
        for conn in reader.connections:
            if conn.topic in topics and topics[conn.topic].msgtype != conn.msgtype:
                problems.append(f"rosbags: topic {conn.topic} has two types")
            topics.setdefault(conn.topic, TopicData(conn.msgtype))
            meta_counts[conn.topic] = meta_counts.get(conn.topic, 0) + conn.msgcount
            digests[conn.msgtype] = conn.digest
        for conn, t, raw in reader.messages():
            try:
                value = plain(reader.deserialize(raw, conn.msgtype))
            except Exception as e:
                problems.append(f"rosbags: cannot decode a {conn.msgtype} on {conn.topic} at {t}: {e}")
                continue
            topics[conn.topic].add(t, value)
        bag_store = reader.typestore
    return topics, meta_counts, digests, bag_store


def read_mcap(files: list[Path], problems: list[str]) -> dict[str, TopicData]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from mcap.reader import make_reader
        from mcap_ros2.reader import read_ros2_messages

    topics: dict[str, TopicData] = {}
    for f in files:
        with open(f, "rb") as fh:
            reader = make_reader(fh)
            header = reader.get_header()
            if header.profile != "ros2":
                problems.append(f"{f.name}: MCAP profile {header.profile!r}, expected 'ros2'")
            summary = reader.get_summary()
            if summary is not None:
                for s in summary.schemas.values():
                    if s.encoding != "ros2msg":
                        problems.append(f"{f.name}: schema {s.name} encoding {s.encoding!r}, expected 'ros2msg'")
                for c in summary.channels.values():
                    if c.message_encoding != "cdr":
                        problems.append(f"{f.name}: channel {c.topic} encoding {c.message_encoding!r}, expected 'cdr'")
        try:
            for m in read_ros2_messages(str(f)):
                name = m.schema.name
                td = topics.setdefault(m.channel.topic, TopicData(name))
                if td.msgtype != name:
                    problems.append(f"mcap: topic {m.channel.topic} has two types")
                td.add(m.log_time_ns, plain(m.ros_msg))
        except Exception as e:
            problems.append(f"mcap-ros2-support: cannot read/decode {f.name}: {type(e).__name__}: {e}")
    return topics


def node_str(node: Any) -> str:
    """A rosbags field node as text: float64, sequence<string>, float64[36], pkg/msg/T."""
    from rosbags.typesys.base import Nodetype

    kind, detail = node
    if kind == Nodetype.BASE:
        return detail[0] + (f"<={detail[1]}" if detail[1] else "")
    if kind == Nodetype.NAME:
        return detail
    if kind == Nodetype.SEQUENCE:
        return f"sequence<{node_str(detail[0])}>"
    return f"{node_str(detail[0])}[{detail[1]}]"


def fields_of(store: Any, msgtype: str) -> Any:
    """Definitions of a type and all types it nests: {type: ["field:type", ...]}."""
    from rosbags.typesys.base import Nodetype

    seen: dict[str, Any] = {}

    def walk(t: str) -> None:
        if t in seen or t not in store.fielddefs:
            return
        _, fields = store.fielddefs[t]
        seen[t] = [f"{n}:{node_str(node)}" for n, node in fields]

        def names(node: Any) -> None:
            kind, detail = node
            if kind == Nodetype.NAME:
                walk(detail)
            elif kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
                names(detail[0])

        for _, node in fields:
            names(node)

    walk(msgtype)
    return seen


def check_definitions(bag_store: Any, ref: Any, digests: dict[str, str], allow_unknown: bool,
                      problems: list[str]) -> None:
    for msgtype, bag_digest in sorted(digests.items()):
        if msgtype not in ref.fielddefs:
            if not allow_unknown:
                problems.append(f"{msgtype}: not a ROS 2 Jazzy or rpq_interfaces type")
            continue
        ours, theirs = fields_of(bag_store, msgtype), fields_of(ref, msgtype)
        for t in sorted(set(ours) | set(theirs)):
            if ours.get(t) != theirs.get(t):
                problems.append(f"{msgtype}: the bag's definition of {t} is {ours.get(t)}, "
                                f"ROS has {theirs.get(t)}")
        want = ref.hash_rihs01(msgtype)
        if bag_digest and bag_digest != want:
            problems.append(f"{msgtype}: RIHS01 in the bag {bag_digest} != {want}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bag", type=Path, help="bag directory (with metadata.yaml) or .mcap file")
    ap.add_argument("--expect", action="append", default=[], metavar="TOPIC=COUNT",
                    help="require exactly COUNT messages on TOPIC (COUNT may be '+' for at least one)")
    ap.add_argument("--allow-unknown-types", action="store_true",
                    help="accept types that are neither ROS 2 Jazzy nor rpq_interfaces")
    args = ap.parse_args()

    if not args.bag.exists():
        fail(f"{args.bag} does not exist")
    files = mcap_files(args.bag)
    if not files:
        fail(f"no .mcap file in {args.bag}")
    problems: list[str] = []
    ref = reference_typestore()
    try:
        rb, meta_counts, digests, bag_store = read_rosbags(args.bag, ref, problems)
    except Exception as e:
        fail(f"rosbags cannot open {args.bag}: {type(e).__name__}: {e}")
    mc = read_mcap(files, problems)
    check_definitions(bag_store, ref, digests, args.allow_unknown_types, problems)

    for topic in sorted(set(rb) | set(mc)):
        a, b = rb.get(topic), mc.get(topic)
        if a is None or b is None:
            problems.append(f"{topic}: only {'rosbags' if b is None else 'mcap-ros2-support'} sees it")
            continue
        if a.msgtype != b.msgtype:
            problems.append(f"{topic}: rosbags says {a.msgtype}, mcap says {b.msgtype}")
        if len(a.entries) != len(b.entries):
            problems.append(f"{topic}: rosbags decoded {len(a.entries)}, mcap {len(b.entries)} messages")
        elif sorted(a.entries) != sorted(b.entries):
            bad = sum(x != y for x, y in zip(sorted(a.entries), sorted(b.entries)))
            problems.append(f"{topic}: {bad} messages decode differently in rosbags and mcap")
        if args.bag.is_dir() and meta_counts.get(topic, len(a.entries)) != len(a.entries):
            problems.append(f"{topic}: metadata.yaml says {meta_counts[topic]} messages, "
                            f"found {len(a.entries)}")
    for spec in args.expect:
        topic, _, want = spec.rpartition("=")
        if not topic:
            fail(f"--expect {spec!r} is not TOPIC=COUNT")
        got = len(rb[topic].entries) if topic in rb else 0
        if (want == "+" and got == 0) or (want != "+" and got != int(want)):
            problems.append(f"{topic}: expected {want} messages, found {got}")

    total = 0
    for topic in sorted(rb):
        td = rb[topic]
        total += len(td.entries)
        emit("topic", topic=topic, type=td.msgtype, count=len(td.entries),
             count_mcap=len(mc[topic].entries) if topic in mc else 0,
             count_metadata=meta_counts.get(topic), rihs01=digests.get(td.msgtype),
             first_time_ns=td.entries[0][0] if td.entries else None,
             last_time_ns=td.entries[-1][0] if td.entries else None,
             first=td.first, last=td.last)
    emit("summary", ok=not problems, path=str(args.bag), topics=len(rb), messages=total,
         files=[f.name for f in files])
    if problems:
        fail(f"{len(problems)} problem(s) in {args.bag}", problems=problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
