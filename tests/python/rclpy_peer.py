#!/usr/bin/env python3
"""A real rclpy (ROS 2 Jazzy, rmw_fastrtps_cpp) peer for the suite's interop tests.

    python rclpy_peer.py [--domain N] [--timeout S] SUBCOMMAND [options]

Run it only inside ../shared/netns-run (it opens DDS sockets). Every subcommand prints JSON
records, one per line, on stdout and exits 0 on success, 1 with an {"kind": "error"} record
on failure, 124 if the watchdog had to end it. See tests/python/README.md for each output.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import re
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import (  # noqa: E402
    EXIT_USAGE,
    Deadline,
    emit,
    fail,
    latency_summary,
    log,
    parse_floats,
    parse_names,
    plain,
    require_private_netns,
    start_watchdog,
)

# rclpy from PyPI ships rmw_fastrtps_cpp only: a cyclone setting meant for the suite's nodes must
# not make this peer fail to start.
if os.environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") != "rmw_fastrtps_cpp":
    log(f"ignoring RMW_IMPLEMENTATION={os.environ['RMW_IMPLEMENTATION']}: using rmw_fastrtps_cpp")
    os.environ["RMW_IMPLEMENTATION"] = "rmw_fastrtps_cpp"

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import (  # noqa: E402
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
)

# ---------------------------------------------------------------------------------------------
# Types and QoS


def import_type(spec: str) -> Any:
    """'pkg/msg/Type', 'pkg/Type' or 'pkg/srv/Type' -> the generated rclpy class."""
    parts = spec.strip("/").split("/")
    if len(parts) == 2:
        pkg, kind, name = parts[0], "msg", parts[1]
    elif len(parts) == 3:
        pkg, kind, name = parts
    else:
        raise ValueError(f"type {spec!r} is not of the form pkg/msg/Type")
    try:
        module = importlib.import_module(f"{pkg}.{kind}")
        return getattr(module, name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"unknown type {spec!r} (is its package installed in the venv?)") from e


def type_name(cls: Any) -> str:
    """The ROS name pkg/msg/Type of an rclpy message or service class."""
    mod = cls.__module__.split(".")
    return f"{mod[0]}/{mod[1]}/{cls.__name__}"


FLOAT_TYPES = {"float", "double", "long double"}
INT_TYPES = {
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "char",
}


def split_field_type(t: str) -> tuple[str, bool]:
    """'sequence<double, 3>' -> ('double', True); 'double[36]' -> ('double', True);
    'string<=8' -> ('string', False); 'geometry_msgs/Point' -> ('geometry_msgs/Point', False)."""
    is_seq = False
    if t.startswith("sequence<") and t.endswith(">"):
        t = t[len("sequence<"):-1].split(",")[0].strip()
        is_seq = True
    m = re.fullmatch(r"(.*)\[(\d+)\]", t)
    if m:
        t, is_seq = m.group(1), True
    t = re.sub(r"<=\d+$", "", t)
    return t, is_seq


def convert_scalar(base: str, value: Any, where: str) -> Any:
    if base in FLOAT_TYPES:
        return float(value)
    if base in INT_TYPES:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}: expected an integer, got {value!r}")
        return value
    if base == "octet":
        return bytes([value]) if isinstance(value, int) else bytes(value)
    if base == "boolean":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true/false, got {value!r}")
        return value
    if base in ("string", "wstring"):
        return str(value)
    raise ValueError(f"{where}: unsupported field type {base!r}")


def fill(msg: Any, data: Any, where: str = "") -> Any:
    """Sets the fields of an rclpy message from a mapping (parsed YAML); returns the message."""
    if data is None:
        return msg
    if not isinstance(data, dict):
        raise ValueError(f"{where or type(msg).__name__}: expected a mapping, got {data!r}")
    fields = msg.get_fields_and_field_types()
    for key, value in data.items():
        here = f"{where}.{key}" if where else key
        if key not in fields:
            raise ValueError(f"{type_name(type(msg))} has no field {here!r} (fields: {list(fields)})")
        base, is_seq = split_field_type(fields[key])
        if "/" in base:
            cls = import_type(base)
            if is_seq:
                setattr(msg, key, [fill(cls(), v, f"{here}[{i}]") for i, v in enumerate(value)])
            else:
                setattr(msg, key, fill(cls(), value, here))
        elif is_seq:
            setattr(msg, key, [convert_scalar(base, v, f"{here}[{i}]") for i, v in enumerate(value)])
        else:
            setattr(msg, key, convert_scalar(base, value, here))
    return msg


def qos_profile(kind: str, depth: int) -> QoSProfile:
    """reliable (rclcpp default), best_effort (sensor data) or latched (transient local)."""
    if kind == "reliable":
        return QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=depth,
            reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE,
        )
    if kind == "best_effort":
        return QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=depth,
            reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE,
        )
    if kind == "latched":
        return QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=depth,
            reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
    raise ValueError(f"unknown QoS {kind!r}")


def split_node_name(full: str) -> tuple[str, str]:
    """'/ns/name' -> ('name', '/ns'); 'name' -> ('name', '/')."""
    full = full.strip()
    if "/" not in full.strip("/"):
        return full.strip("/"), "/"
    ns, _, name = full.rpartition("/")
    return name, ns if ns.startswith("/") else "/" + ns


def stamp_dict(stamp: Any) -> dict[str, int]:
    return {"sec": int(stamp.sec), "nanosec": int(stamp.nanosec)}


# ---------------------------------------------------------------------------------------------
# Peer runtime


class Peer:
    """One rclpy node plus an executor, with deadline-bounded spinning."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.deadline = Deadline(args.timeout)
        init_kwargs = {"args": []}
        if args.domain is not None:
            init_kwargs["domain_id"] = args.domain
        rclpy.init(**init_kwargs)
        self.node: Node = rclpy.create_node(args.node_name)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)

    def spin_until(self, done: Callable[[], bool], deadline: Deadline | None = None) -> bool:
        """Spins until done() is true or the deadline (default: the peer's) passes."""
        deadline = deadline or self.deadline
        while not done():
            left = deadline.remaining()
            if left <= 0:
                return done()
            self.executor.spin_once(timeout_sec=min(0.05, left))
        return True

    def spin_for(self, seconds: float) -> None:
        end = Deadline(min(seconds, self.deadline.remaining()))
        while not end.expired():
            self.executor.spin_once(timeout_sec=min(0.05, end.remaining()))

    def wait_matched(self, entity: Any, count_fn: str, what: str, minimum: int = 1) -> int:
        """Waits until a publisher/subscription has `minimum` matched peers; fails on timeout."""
        ok = self.spin_until(lambda: getattr(entity, count_fn)() >= minimum)
        n = getattr(entity, count_fn)()
        if not ok:
            fail(f"{what}: no matching peer within {self.args.timeout} s", matched=n)
        return n

    def call(self, srv_cls: Any, name: str, request: Any) -> tuple[Any, int]:
        """Calls a service, retrying per attempt timeout (the first reply right after discovery
        can be lost, see INTEROP.md). Returns (response, attempts)."""
        client = self.node.create_client(srv_cls, name)
        if not self.spin_until(client.service_is_ready):
            fail(f"service {name} ({type_name(srv_cls)}) did not appear within {self.args.timeout} s")
        attempts = 0
        while not self.deadline.expired():
            attempts += 1
            future = client.call_async(request)
            attempt = Deadline(min(self.args.attempt_timeout, self.deadline.remaining()))
            if self.spin_until(future.done, attempt):
                return future.result(), attempts
            client.remove_pending_request(future)
            log(f"no reply from {name} within {self.args.attempt_timeout} s (attempt {attempts}), retrying")
        fail(f"service {name}: no reply within {self.args.timeout} s", attempts=attempts)

    def close(self) -> None:
        try:
            self.executor.remove_node(self.node)
            self.node.destroy_node()
            rclpy.try_shutdown()
        except Exception as e:  # teardown problems must not hide the result
            log(f"shutdown: {e}")


# ---------------------------------------------------------------------------------------------
# Subcommands


def cmd_joint_states(p: Peer, a: argparse.Namespace) -> None:
    from sensor_msgs.msg import JointState

    got: list[Any] = []
    p.node.create_subscription(JointState, a.topic, got.append, qos_profile(a.qos, 10))
    emitted = 0
    while emitted < a.count:
        if not p.spin_until(lambda: len(got) > emitted):
            fail(f"received {emitted} of {a.count} messages on {a.topic} within {a.timeout} s",
                 received=emitted)
        m = got[emitted]
        emit("joint_state", topic=a.topic, index=emitted, stamp=stamp_dict(m.header.stamp),
             frame_id=m.header.frame_id, name=list(m.name), position=m.position,
             velocity=m.velocity, effort=m.effort)
        emitted += 1
    emit("done", count=emitted)


def cmd_robot_description(p: Peer, a: argparse.Namespace) -> None:
    from std_msgs.msg import String

    got: list[Any] = []
    p.node.create_subscription(String, a.topic, got.append, qos_profile("latched", 1))
    if not p.spin_until(lambda: bool(got)):
        fail(f"no latched message on {a.topic} within {a.timeout} s (is it TRANSIENT_LOCAL?)")
    text: str = got[0].data
    raw = text.encode("utf-8")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    emit("robot_description", topic=a.topic, length=len(raw),
         sha256=hashlib.sha256(raw).hexdigest(), head=text[:80],
         has_robot_tag="<robot" in text, elapsed_s=round(p.deadline.elapsed(), 3))


def cmd_command_position(p: Peer, a: argparse.Namespace) -> None:
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    target = parse_floats(a.values)
    names = parse_names(a.joint_names)
    if names and len(names) != len(target):
        fail(f"--joint-names has {len(names)} names but --values has {len(target)} values")
    states: list[Any] = []
    p.node.create_subscription(JointState, a.state_topic, states.append, qos_profile("reliable", 10))
    pub = p.node.create_publisher(Float64MultiArray, a.topic, qos_profile("reliable", 10))
    if not p.spin_until(lambda: bool(states)):
        fail(f"no {a.state_topic} within {a.timeout} s")

    def watched(m: Any) -> list[float]:
        """Positions of the commanded joints, in command order."""
        if names:
            idx = {n: i for i, n in enumerate(m.name)}
            missing = [n for n in names if n not in idx]
            if missing:
                fail(f"{a.state_topic} has no joints {missing} (it has {list(m.name)})")
            return [float(m.position[idx[n]]) for n in names]
        return [float(x) for x in list(m.position)[: len(target)]]

    initial = states[-1]
    emit("initial", name=list(initial.name), position=initial.position,
         stamp=stamp_dict(initial.header.stamp))
    p.wait_matched(pub, "get_subscription_count", f"publisher on {a.topic}")
    cmd = Float64MultiArray()
    cmd.data = target
    period = 1.0 / a.rate
    sent = 0
    start_all = dict(zip(initial.name, (float(x) for x in initial.position)))
    hold_until = Deadline(a.hold) if a.expect_hold else None
    while True:
        pub.publish(cmd)
        sent += 1
        p.spin_for(period)
        last = states[-1]
        if hold_until is not None:
            # Every joint must stay put, not only the ones the (refused) command names.
            now_all = dict(zip(last.name, (float(x) for x in last.position)))
            moved = max((abs(now_all.get(n, float("inf")) - x) for n, x in start_all.items()),
                        default=0.0)
            if moved > a.tolerance:
                fail(f"robot moved by {moved:.6g} although the command should be refused",
                     position=last.position, start=initial.position, commands_sent=sent)
            if hold_until.expired():
                emit("held", name=list(last.name), position=last.position,
                     start=initial.position, max_motion=moved, commands_sent=sent,
                     elapsed_s=round(p.deadline.elapsed(), 3))
                return
            if p.deadline.expired():
                fail(f"--hold {a.hold} s does not fit in --timeout {a.timeout} s")
            continue
        pos = watched(last)
        if len(pos) == len(target):
            err = max((abs(x - y) for x, y in zip(pos, target)), default=0.0)
            if err <= a.tolerance:
                emit("reached", name=list(last.name), position=last.position, target=target,
                     max_error=err, commands_sent=sent, stamp=stamp_dict(last.header.stamp),
                     elapsed_s=round(p.deadline.elapsed(), 3))
                return
        if p.deadline.expired():
            fail(f"robot did not reach the target within {a.timeout} s", position=pos,
                 target=target, commands_sent=sent)


def emit_response(name: str, srv_cls: Any, response: Any, attempts: int, p: Peer) -> None:
    emit("response", service=name, type=type_name(srv_cls), attempts=attempts,
         elapsed_s=round(p.deadline.elapsed(), 3), response=plain(response))


def cmd_call_trigger(p: Peer, a: argparse.Namespace) -> None:
    from std_srvs.srv import Trigger

    resp, attempts = p.call(Trigger, a.service, Trigger.Request())
    emit_response(a.service, Trigger, resp, attempts, p)


def cmd_call_setbool(p: Peer, a: argparse.Namespace) -> None:
    from std_srvs.srv import SetBool

    req = SetBool.Request()
    req.data = a.data == "true"
    resp, attempts = p.call(SetBool, a.service, req)
    emit_response(a.service, SetBool, resp, attempts, p)


def cmd_call_fk(p: Peer, a: argparse.Namespace) -> None:
    from rpq_interfaces.srv import ComputeForwardKinematics as Fk

    req = Fk.Request()
    req.joint_names = parse_names(a.joint_names)
    req.positions = parse_floats(a.positions)
    req.link_name = a.link
    resp, attempts = p.call(Fk, a.service, req)
    emit_response(a.service, Fk, resp, attempts, p)


def cmd_call(p: Peer, a: argparse.Namespace) -> None:
    """Calls a service of any installed type once per request of --requests-yaml (a YAML
    list of request field mappings), in order, on one client; prints each response."""
    import yaml

    cls = import_type(a.type)
    try:
        items = yaml.safe_load(a.requests_yaml)
        if not isinstance(items, list):
            items = [items]
        requests = [fill(cls.Request(), item, f"request[{i}]") for i, item in enumerate(items)]
    except (ValueError, TypeError, AssertionError, yaml.YAMLError) as e:
        fail(f"cannot build {a.type} requests from {a.requests_yaml!r}: {e}")
    if a.concurrent:
        # A first request with retries (the reply right after discovery can be lost), then the
        # rest all at once; responses are printed in the order they arrive.
        first, attempts = p.call(cls, a.service, requests[0])
        emit("response", service=a.service, type=type_name(cls), index=0, attempts=attempts,
             elapsed_s=round(p.deadline.elapsed(), 3), response=plain(first))
        client = p.node.create_client(cls, a.service)
        if not p.spin_until(client.service_is_ready):
            fail(f"service {a.service} did not appear within {a.timeout} s")
        pending = {i: client.call_async(req) for i, req in enumerate(requests) if i > 0}
        while pending:
            if not p.spin_until(lambda: any(f.done() for f in pending.values())):
                fail(f"{len(pending)} concurrent calls of {a.service} unanswered", pending=list(pending))
            for i in [i for i, f in pending.items() if f.done()]:
                emit("response", service=a.service, type=type_name(cls), index=i, attempts=1,
                     elapsed_s=round(p.deadline.elapsed(), 3),
                     response=plain(pending.pop(i).result()))
        return
    for i, req in enumerate(requests):
        resp, attempts = p.call(cls, a.service, req)
        emit("response", service=a.service, type=type_name(cls), index=i, attempts=attempts,
             elapsed_s=round(p.deadline.elapsed(), 3), response=plain(resp))


def cmd_call_timing(p: Peer, a: argparse.Namespace) -> None:
    """Round-trip times of one request sent --count times in a row (after --warmup calls)."""
    import yaml

    cls = import_type(a.type)
    req = fill(cls.Request(), yaml.safe_load(a.request_yaml) or {})
    client = p.node.create_client(cls, a.service)
    if not p.spin_until(client.service_is_ready):
        fail(f"service {a.service} did not appear within {a.timeout} s")
    times: list[float] = []
    failures = 0
    for i in range(a.warmup + a.count):
        t0 = time.perf_counter()
        future = client.call_async(req)
        if not p.spin_until(future.done, Deadline(min(a.attempt_timeout, p.deadline.remaining()))):
            fail(f"call {i} of {a.service}: no reply within {a.attempt_timeout} s")
        dt = time.perf_counter() - t0
        if not getattr(future.result(), "success", True):
            failures += 1
        if i >= a.warmup:
            times.append(dt)
    times.sort()
    emit("timing", service=a.service, count=len(times), failures=failures,
         median_s=times[len(times) // 2], p99_s=times[min(len(times) - 1, int(0.99 * len(times)))],
         min_s=times[0], max_s=times[-1])


def cmd_graph(p: Peer, a: argparse.Namespace) -> None:
    name, ns = split_node_name(a.node)
    seen: dict[str, Any] = {}

    def look() -> bool:
        nodes = p.node.get_node_names_and_namespaces()
        seen["nodes"] = nodes
        if (name, ns) not in nodes:
            return False
        try:
            seen["publishers"] = dict(p.node.get_publisher_names_and_types_by_node(name, ns))
            seen["subscribers"] = dict(p.node.get_subscriber_names_and_types_by_node(name, ns))
            seen["services"] = dict(p.node.get_service_names_and_types_by_node(name, ns))
            seen["clients"] = dict(p.node.get_client_names_and_types_by_node(name, ns))
        except Exception as e:  # node vanished between the two calls
            log(f"graph query: {e}")
            return False
        return (all(t in seen["publishers"] for t in a.expect_publisher)
                and all(t in seen["subscribers"] for t in a.expect_subscriber)
                and all(s in seen["services"] for s in a.expect_service))

    ok = p.spin_until(look)
    record = {
        "node": name, "namespace": ns,
        "nodes": [{"name": n, "namespace": s} for n, s in seen.get("nodes", [])],
        "publishers": seen.get("publishers", {}), "subscribers": seen.get("subscribers", {}),
        "services": seen.get("services", {}), "clients": seen.get("clients", {}),
        "topics": dict(p.node.get_topic_names_and_types()),
        "elapsed_s": round(p.deadline.elapsed(), 3),
    }
    if not ok:
        missing = {
            "node": (name, ns) not in seen.get("nodes", []),
            "publishers": [t for t in a.expect_publisher if t not in record["publishers"]],
            "subscribers": [t for t in a.expect_subscriber if t not in record["subscribers"]],
            "services": [s for s in a.expect_service if s not in record["services"]],
        }
        fail(f"node {ns.rstrip('/')}/{name} or expected endpoints not in the graph within "
             f"{a.timeout} s", missing=missing, graph=record)
    emit("graph", **record)


def cmd_echo(p: Peer, a: argparse.Namespace) -> None:
    cls = import_type(a.type)
    got: list[tuple[float, Any]] = []
    p.node.create_subscription(cls, a.topic, lambda m: got.append((time.time(), m)),
                               qos_profile(a.qos, max(a.depth, 1)))
    emitted = 0
    while emitted < a.count:
        if not p.spin_until(lambda: len(got) > emitted):
            fail(f"received {emitted} of {a.count} messages on {a.topic} within {a.timeout} s",
                 received=emitted)
        t, m = got[emitted]
        emit("message", topic=a.topic, type=type_name(cls), index=emitted,
             recv_time=round(t, 6), data=plain(m))
        emitted += 1
    emit("done", count=emitted)


def cmd_pub(p: Peer, a: argparse.Namespace) -> None:
    import yaml

    cls = import_type(a.type)
    try:
        data = yaml.safe_load(a.yaml) if a.yaml else {}
        msg = fill(cls(), data)
    except (ValueError, TypeError, AssertionError, yaml.YAMLError) as e:
        fail(f"cannot build {a.type} from {a.yaml!r}: {e}")
    pub = p.node.create_publisher(cls, a.topic, qos_profile(a.qos, max(a.depth, 1)))
    matched = 0
    if a.wait_subscribers > 0:
        matched = p.wait_matched(pub, "get_subscription_count", f"publisher on {a.topic}",
                                 a.wait_subscribers)
    period = 1.0 / a.rate
    for _ in range(a.count):
        pub.publish(msg)
        p.spin_for(period)
    if a.linger > 0:  # let reliable retransmissions finish before the participant goes away
        p.spin_for(a.linger)
    emit("published", topic=a.topic, type=type_name(cls), count=a.count, matched=matched,
         data=plain(msg))


def cmd_latency_echo(p: Peer, a: argparse.Namespace) -> None:
    cls = import_type(a.type)
    pub = p.node.create_publisher(cls, a.out_topic, qos_profile(a.qos, 10))
    count = [0]

    def on_msg(m: Any) -> None:
        pub.publish(m)
        count[0] += 1

    p.node.create_subscription(cls, a.in_topic, on_msg, qos_profile(a.qos, 10))
    emit("ready", in_topic=a.in_topic, out_topic=a.out_topic)
    p.spin_until(lambda: a.count > 0 and count[0] >= a.count)
    if a.count > 0 and count[0] < a.count:
        fail(f"echoed {count[0]} of {a.count} messages within {a.timeout} s", echoed=count[0])
    emit("echo_done", echoed=count[0])


def cmd_latency_ping(p: Peer, a: argparse.Namespace) -> None:
    from std_msgs.msg import Header

    pub = p.node.create_publisher(Header, a.out_topic, qos_profile(a.qos, 10))
    arrivals: dict[str, int] = {}

    def on_pong(m: Any) -> None:
        arrivals[m.frame_id.split(" ", 1)[0]] = time.perf_counter_ns()

    sub = p.node.create_subscription(Header, a.in_topic, on_pong, qos_profile(a.qos, 10))
    p.wait_matched(pub, "get_subscription_count", f"ping publisher on {a.out_topic}")
    p.wait_matched(sub, "get_publisher_count", f"pong subscription on {a.in_topic}")
    pad = " " + "x" * a.payload if a.payload > 0 else ""
    rtts: list[float] = []
    lost = 0
    for seq in range(-a.warmup, a.count):
        if p.deadline.expired():
            break
        key = str(seq)
        msg = Header()
        t0 = time.perf_counter_ns()
        msg.stamp.sec, msg.stamp.nanosec = divmod(t0, 1_000_000_000)
        msg.frame_id = key + pad
        pub.publish(msg)
        if p.spin_until(lambda: key in arrivals, Deadline(min(a.reply_timeout, p.deadline.remaining()))):
            if seq >= 0:
                rtts.append((arrivals[key] - t0) / 1e9)
        elif seq >= 0:
            lost += 1
        if a.interval > 0:
            p.spin_for(a.interval)
    if not rtts:
        fail(f"no pong received on {a.in_topic}", lost=lost)
    summary = latency_summary(rtts)
    emit("latency", peer="rclpy", count=len(rtts), lost=lost, payload_bytes=a.payload, **summary)
    if lost > a.max_lost:
        fail(f"{lost} pings lost (more than --max-lost {a.max_lost})", **summary)


def cmd_serve(p: Peer, a: argparse.Namespace) -> None:
    import yaml

    srv_cls = import_type(a.type)
    try:
        template = yaml.safe_load(a.response_yaml) if a.response_yaml else {}
        fill(srv_cls.Response(), template)  # validate once, before any request arrives
    except (ValueError, TypeError, AssertionError, yaml.YAMLError) as e:
        fail(f"cannot build {a.type} response from {a.response_yaml!r}: {e}")
    served = [0]

    def handle(request: Any, response: Any) -> Any:
        served[0] += 1
        fill(response, template)
        emit("request", service=a.service, type=type_name(srv_cls), index=served[0] - 1,
             request=plain(request), response=plain(response))
        return response

    p.node.create_service(srv_cls, a.service, handle)
    emit("ready", service=a.service, type=type_name(srv_cls))
    p.spin_until(lambda: a.count > 0 and served[0] >= a.count)
    if a.count > 0 and served[0] < a.count:
        fail(f"served {served[0]} of {a.count} requests within {a.timeout} s", served=served[0])
    p.spin_for(a.linger)  # the last reply still has to go out
    emit("served", count=served[0])


def param_value(v: Any) -> Any:
    """rcl_interfaces/ParameterValue -> a plain value (None if NOT_SET)."""
    field = {
        1: "bool_value", 2: "integer_value", 3: "double_value", 4: "string_value",
        5: "byte_array_value", 6: "bool_array_value", 7: "integer_array_value",
        8: "double_array_value", 9: "string_array_value",
    }.get(v.type)
    return plain(getattr(v, field)) if field else None


def cmd_param_list(p: Peer, a: argparse.Namespace) -> None:
    from rcl_interfaces.srv import ListParameters

    name, ns = split_node_name(a.node)
    service = f"{ns.rstrip('/')}/{name}/list_parameters"
    req = ListParameters.Request()
    req.depth = 0  # recursive
    resp, attempts = p.call(ListParameters, service, req)
    emit("parameters", node=a.node, service=service, attempts=attempts,
         names=list(resp.result.names), prefixes=list(resp.result.prefixes))


def cmd_param_get(p: Peer, a: argparse.Namespace) -> None:
    from rcl_interfaces.srv import GetParameters

    name, ns = split_node_name(a.node)
    service = f"{ns.rstrip('/')}/{name}/get_parameters"
    req = GetParameters.Request()
    req.names = parse_names(a.names)
    resp, attempts = p.call(GetParameters, service, req)
    if len(resp.values) != len(req.names):  # rclpy answers nothing if one name is unknown
        fail(f"{service} returned {len(resp.values)} values for {len(req.names)} names "
             f"(is a name undeclared?)", names=req.names)
    values = {n: param_value(v) for n, v in zip(req.names, resp.values)}
    types = {n: int(v.type) for n, v in zip(req.names, resp.values)}
    emit("parameter_values", node=a.node, service=service, attempts=attempts, values=values,
         types=types)


# ---------------------------------------------------------------------------------------------
# Command line


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # Accepted before or after the subcommand; SUPPRESS keeps the top-level value otherwise.
    common.add_argument("--domain", type=int, default=argparse.SUPPRESS,
                        help="ROS domain id (default: $ROS_DOMAIN_ID, else 0)")
    common.add_argument("--timeout", type=float, default=argparse.SUPPRESS,
                        help="give up after this many seconds (default 20)")
    common.add_argument("--node-name", default=argparse.SUPPRESS,
                        help="this peer's node name (default rpq_rclpy_peer)")
    common.add_argument("--attempt-timeout", type=float, default=argparse.SUPPRESS,
                        help="service calls: wait this long for a reply before resending (default 2)")

    top = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--domain", type=int, default=None)
    top.add_argument("--timeout", type=float, default=20.0)
    top.add_argument("--node-name", default="rpq_rclpy_peer")
    top.add_argument("--attempt-timeout", type=float, default=2.0)
    sub = top.add_subparsers(dest="cmd", required=True)

    def add(name: str, fn: Callable, help_text: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, parents=[common], help=help_text)
        sp.set_defaults(fn=fn)
        return sp

    sp = add("joint-states", cmd_joint_states, "decode N sensor_msgs/JointState messages")
    sp.add_argument("--topic", default="/joint_states")
    sp.add_argument("--count", type=int, default=3)
    sp.add_argument("--qos", choices=["reliable", "best_effort"], default="reliable")

    sp = add("robot-description", cmd_robot_description, "read the latched robot_description")
    sp.add_argument("--topic", default="/robot_description")
    sp.add_argument("--out", help="also write the URDF text to this file")

    sp = add("command-position", cmd_command_position,
             "publish a position command until /joint_states shows it reached")
    sp.add_argument("--values", required=True, help="comma-separated target positions")
    sp.add_argument("--joint-names", default="",
                    help="the controller's joint order, i.e. the joint each value drives "
                         "(default: the first len(values) joints of /joint_states, in its order)")
    sp.add_argument("--topic", default="/forward_position_controller/commands")
    sp.add_argument("--state-topic", default="/joint_states")
    sp.add_argument("--tolerance", type=float, default=1e-3)
    sp.add_argument("--rate", type=float, default=10.0, help="command rate in Hz")
    sp.add_argument("--expect-hold", action="store_true",
                    help="the command must be refused: succeed if the robot stays put for --hold s")
    sp.add_argument("--hold", type=float, default=2.0)

    sp = add("call-trigger", cmd_call_trigger, "call a std_srvs/srv/Trigger service")
    sp.add_argument("--service", required=True)

    sp = add("call-setbool", cmd_call_setbool, "call a std_srvs/srv/SetBool service")
    sp.add_argument("--service", required=True)
    sp.add_argument("--data", choices=["true", "false"], default="true")

    sp = add("call-fk", cmd_call_fk, "call rpq_interfaces/srv/ComputeForwardKinematics")
    sp.add_argument("--service", default="/compute_forward_kinematics")
    sp.add_argument("--joint-names", default="")
    sp.add_argument("--positions", default="")
    sp.add_argument("--link", default="")

    sp = add("call", cmd_call, "call a service of any installed type, one call per request")
    sp.add_argument("--service", required=True)
    sp.add_argument("--type", required=True, help="pkg/srv/Type")
    sp.add_argument("--requests-yaml", default="[{}]",
                    help="a YAML list of request field mappings, e.g. '[{tolerance: 0.1}]'")
    sp.add_argument("--concurrent", action="store_true",
                    help="call the first request alone (with retries), then all the others at "
                         "once; responses in arrival order")

    sp = add("call-timing", cmd_call_timing, "round-trip times of a service call repeated N times")
    sp.add_argument("--service", required=True)
    sp.add_argument("--type", required=True, help="pkg/srv/Type")
    sp.add_argument("--request-yaml", default="{}")
    sp.add_argument("--count", type=int, default=1000)
    sp.add_argument("--warmup", type=int, default=50)

    sp = add("serve", cmd_serve, "answer requests of any installed service type")
    sp.add_argument("--service", required=True)
    sp.add_argument("--type", required=True, help="pkg/srv/Type")
    sp.add_argument("--response-yaml", default="{}", help="response fields, e.g. '{success: true}'")
    sp.add_argument("--count", type=int, default=1, help="requests to answer (0: until --timeout)")
    sp.add_argument("--linger", type=float, default=0.5)

    sp = add("graph", cmd_graph, "wait for a node in the ROS graph and print its endpoints")
    sp.add_argument("--node", required=True, help="node name, optionally /namespace/name")
    sp.add_argument("--expect-publisher", action="append", default=[], metavar="TOPIC")
    sp.add_argument("--expect-subscriber", action="append", default=[], metavar="TOPIC")
    sp.add_argument("--expect-service", action="append", default=[], metavar="SERVICE")

    sp = add("echo", cmd_echo, "print N messages of any installed type")
    sp.add_argument("--topic", required=True)
    sp.add_argument("--type", required=True, help="pkg/msg/Type")
    sp.add_argument("--count", type=int, default=1)
    sp.add_argument("--qos", choices=["reliable", "best_effort", "latched"], default="reliable")
    sp.add_argument("--depth", type=int, default=10)

    sp = add("pub", cmd_pub, "publish a message given as YAML")
    sp.add_argument("--topic", required=True)
    sp.add_argument("--type", required=True, help="pkg/msg/Type")
    sp.add_argument("--yaml", default="{}", help="field values, e.g. '{data: [1.0, 2.0]}'")
    sp.add_argument("--rate", type=float, default=10.0)
    sp.add_argument("--count", type=int, default=1)
    sp.add_argument("--qos", choices=["reliable", "best_effort", "latched"], default="reliable")
    sp.add_argument("--depth", type=int, default=10)
    sp.add_argument("--wait-subscribers", type=int, default=1,
                    help="wait for this many matched subscriptions before publishing (0: don't)")
    sp.add_argument("--linger", type=float, default=0.5,
                    help="keep the node alive this long after the last message")

    for name, fn, help_text in (
        ("latency-echo", cmd_latency_echo, "republish every message of --in-topic on --out-topic"),
        ("latency-ping", cmd_latency_ping, "measure round trips through an echo node"),
    ):
        sp = add(name, fn, help_text)
        sp.add_argument("--qos", choices=["reliable", "best_effort"], default="reliable")
        if name == "latency-echo":
            sp.add_argument("--in-topic", default="/rpq_ping")
            sp.add_argument("--out-topic", default="/rpq_pong")
            sp.add_argument("--type", default="std_msgs/msg/Header")
            sp.add_argument("--count", type=int, default=0,
                            help="stop after this many echoes (0: run until --timeout)")
        else:
            sp.add_argument("--out-topic", default="/rpq_ping")
            sp.add_argument("--in-topic", default="/rpq_pong")
            sp.add_argument("--count", type=int, default=1000)
            sp.add_argument("--warmup", type=int, default=50)
            sp.add_argument("--payload", type=int, default=0, help="extra bytes in frame_id")
            sp.add_argument("--interval", type=float, default=0.0, help="pause between pings (s)")
            sp.add_argument("--reply-timeout", type=float, default=1.0)
            sp.add_argument("--max-lost", type=int, default=0)

    sp = add("param-list", cmd_param_list, "list a node's parameters (ListParameters service)")
    sp.add_argument("--node", required=True)

    sp = add("param-get", cmd_param_get, "read parameters of a node (GetParameters service)")
    sp.add_argument("--node", required=True)
    sp.add_argument("--names", required=True, help="comma-separated parameter names")
    return top


def main() -> int:
    args = build_parser().parse_args()
    if args.timeout <= 0:
        log("--timeout must be positive")
        return EXIT_USAGE
    if args.domain is not None:
        os.environ["ROS_DOMAIN_ID"] = str(args.domain)
    require_private_netns()
    start_watchdog(args.timeout)
    peer = Peer(args)
    code = 0
    try:
        args.fn(peer, args)
    except SystemExit as e:
        code = int(e.code or 0)
    except ValueError as e:  # bad input (unknown type, field, value): no traceback needed
        emit("error", reason=str(e))
        code = 1
    except Exception as e:  # report, do not hide behind a traceback only
        import traceback

        traceback.print_exc()
        emit("error", reason=f"{type(e).__name__}: {e}")
        code = 1
    peer.close()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: Fast DDS threads can make it slow, the result is out already.
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
