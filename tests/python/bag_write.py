#!/usr/bin/env python3
"""Writes a rosbag2 bag (MCAP storage, rosbag2 version 9) with the third-party `rosbags` Writer,
to make test inputs that the suite did not write itself.

    python bag_write.py OUT_DIR --messages FILE.yaml      messages from a YAML file
    python bag_write.py OUT_DIR --yaml 'TEXT'             the same, inline
    python bag_write.py OUT_DIR --demo                    a small bag of the suite's topics

The YAML is a list of messages, in any order (they are written sorted by time):
    - topic: /forward_position_controller/commands
      type: std_msgs/msg/Float64MultiArray
      t: 0.5                      # seconds after --start (or stamp_ns: absolute nanoseconds)
      data: {data: [0.0, 0.1, 0.2, 0.0, 0.0, 0.0]}
Optional per-message `qos: latched|reliable|best_effort` (first one per topic wins) sets the
topic's offered QoS in the bag. Types: any ROS 2 Jazzy message known to rosbags, plus
rpq_interfaces/msg/* from msg/. Opens no sockets. Prints one JSON line per topic, then
{"kind": "written", ...}; exits 1 with {"kind": "error"} on bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bag_common import build_message, normalize_type, reference_typestore  # noqa: E402
from peer_common import emit, fail  # noqa: E402

JOINTS = [f"joint_{i}" for i in range(1, 7)]


def demo_messages() -> list[dict[str, Any]]:
    """Commands to a 6-joint robot, joint states, a transform, a driver status and a latched
    description: one of each kind of topic the suite handles."""
    msgs: list[dict[str, Any]] = [{
        "topic": "/robot_description", "type": "std_msgs/msg/String", "t": 0.0, "qos": "latched",
        "data": {"data": '<?xml version="1.0"?>\n<robot name="demo"><link name="base_link"/></robot>\n'},
    }]
    for k in range(5):
        t = 0.1 * k
        sec, nsec = 1_700_000_000 + int(t), int(round((t % 1) * 1e9))
        msgs.append({
            "topic": "/joint_states", "type": "sensor_msgs/msg/JointState", "t": t,
            "data": {
                "header": {"stamp": {"sec": sec, "nanosec": nsec}, "frame_id": ""},
                "name": JOINTS, "position": [0.01 * k * (i + 1) for i in range(6)],
                "velocity": [0.1 * (i + 1) for i in range(6)], "effort": [],
            },
        })
    for k, target in enumerate([[0.1, -0.2, 0.3, 0.0, 0.5, -0.6], [0.0] * 6, [1e-9, -0.0, 0, 0, 0, 0]]):
        msgs.append({
            "topic": "/forward_position_controller/commands", "type": "std_msgs/msg/Float64MultiArray",
            "t": 0.05 + 0.15 * k, "data": {"data": target},
        })
    msgs.append({
        "topic": "/tf", "type": "tf2_msgs/msg/TFMessage", "t": 0.2,
        "data": {"transforms": [{
            "header": {"stamp": {"sec": 1_700_000_000, "nanosec": 200_000_000}, "frame_id": "base_link"},
            "child_frame_id": "link_1",
            "transform": {"translation": {"x": 0.0, "y": 0.0, "z": 0.341},
                          "rotation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}},
        }]},
    })
    # DriverStatus.mode is a uint8 constant: 1 = MODE_POSITION.
    msgs.append({
        "topic": "/driver_status", "type": "rpq_interfaces/msg/DriverStatus", "t": 0.3,
        "data": {"header": {"frame_id": "base_link"}, "mode": 1, "holding": False,
                 "rejected_commands": 1, "last_error": "command has 5 values, expected 6"},
    })
    return msgs


def qos_profile(kind: str) -> Any:
    from rosbags.interfaces import (
        Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime,
    )

    reliability = {"latched": QosReliability.RELIABLE, "reliable": QosReliability.RELIABLE,
                   "best_effort": QosReliability.BEST_EFFORT}.get(kind)
    if reliability is None:
        raise ValueError(f"unknown qos {kind!r} (latched, reliable or best_effort)")
    durability = QosDurability.TRANSIENT_LOCAL if kind == "latched" else QosDurability.VOLATILE
    zero = QosTime(0, 0)
    return Qos(QosHistory.KEEP_LAST, 1 if kind == "latched" else 10, reliability, durability,
               zero, zero, QosLiveliness.AUTOMATIC, zero, False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="bag directory to create (must not exist)")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--messages", type=Path, help="YAML file with the messages")
    src.add_argument("--yaml", help="the messages as inline YAML")
    src.add_argument("--demo", action="store_true", help="write the built-in demo bag")
    ap.add_argument("--start", type=float, default=1_700_000_000.0,
                    help="bag time of t = 0, in seconds since the epoch")
    args = ap.parse_args()

    import yaml
    from rosbags.rosbag2 import StoragePlugin, Writer

    try:
        if args.demo:
            msgs = demo_messages()
        else:
            text = args.messages.read_text(encoding="utf-8") if args.messages else args.yaml
            msgs = yaml.safe_load(text)
        if not isinstance(msgs, list) or not msgs:
            raise ValueError("expected a non-empty YAML list of messages")
        store = reference_typestore()
        start_ns = int(round(args.start * 1e9))
        prepared = []
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or "topic" not in m or "type" not in m:
                raise ValueError(f"message {i}: needs at least 'topic' and 'type'")
            extra = set(m) - {"topic", "type", "t", "stamp_ns", "data", "qos"}
            if extra:
                raise ValueError(f"message {i}: unknown keys {sorted(extra)}")
            msgtype = normalize_type(m["type"])
            stamp = int(m["stamp_ns"]) if "stamp_ns" in m else start_ns + int(round(float(m.get("t", 0.0)) * 1e9))
            obj = build_message(store, msgtype, m.get("data"), f"message {i}")
            prepared.append((stamp, i, m["topic"], msgtype, m.get("qos"), obj))
    except (OSError, ValueError, TypeError, yaml.YAMLError) as e:
        fail(f"bad input: {e}")

    if args.out.exists():
        fail(f"{args.out} exists already (rosbags' Writer only creates new bags)")
    prepared.sort(key=lambda p: (p[0], p[1]))
    counts: dict[str, int] = {}
    with Writer(args.out, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns: dict[str, Any] = {}
        for stamp, _, topic, msgtype, qos, obj in prepared:
            conn = conns.get(topic)
            if conn is None:
                profiles = [qos_profile(qos)] if qos else []
                conn = writer.add_connection(topic, msgtype, typestore=store,
                                             offered_qos_profiles=profiles)
                conns[topic] = conn
            elif conn.msgtype != msgtype:
                fail(f"topic {topic} has two types: {conn.msgtype} and {msgtype}")
            writer.write(conn, stamp, store.serialize_cdr(obj, msgtype))
            counts[topic] = counts.get(topic, 0) + 1
    for topic, conn in conns.items():
        emit("topic", topic=topic, type=conn.msgtype, count=counts[topic], rihs01=conn.digest)
    emit("written", path=str(args.out), topics=len(conns), messages=sum(counts.values()),
         files=sorted(p.name for p in args.out.iterdir()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
