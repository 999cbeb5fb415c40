#!/usr/bin/env python3
"""A Cyclone DDS peer (PyPI `cyclonedds`, no rclpy) speaking ROS 2 on the wire like
rmw_cyclonedds_cpp, for the suite's interop tests.

    python cyclone_peer.py [--domain N] [--timeout S] SUBCOMMAND [options]

The ROS message types are declared below as IDL structs, by hand, with the DDS type names rclcpp
uses (std_msgs::msg::dds_::String_ ...) and the .msg field order; `selftest` checks every
declaration against rclpy's generated classes and rosbags' Jazzy type store (no sockets).

Services follow rmw_cyclonedds_cpp: request topic rq/<name>Request, reply topic rr/<name>Reply,
types pkg::srv::dds_::<Srv>_Request_ / _Response_, and each payload starts with the 16-byte
request header {uint64 client_guid; int64 sequence_number} before the request or response fields.
The client_guid is the instance handle of the client's request writer; the server copies the
header into its reply unchanged, and the client keeps only replies carrying its own guid and the
sequence number it sent.

Run it only inside ../shared/netns-run, with CYCLONEDDS_URI pointing at tests/cyclonedds.xml.
Output: one JSON object per line on stdout (see tests/python/README.md); exit 0 on success,
1 with an {"kind": "error"} record on failure, 124 from the watchdog.
"""

import argparse
import dataclasses
import os
import sys
import time
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import (  # noqa: E402
    EXIT_USAGE,
    Deadline,
    emit,
    fail,
    log,
    parse_floats,
    parse_names,
    plain,
    require_private_netns,
    start_watchdog,
)

from cyclonedds.idl import IdlStruct, make_idl_struct  # noqa: E402
from cyclonedds.idl.types import (  # noqa: E402
    array,
    float32,
    float64,
    int32,
    int64,
    sequence,
    uint8,
    uint32,
    uint64,
)

# ---------------------------------------------------------------------------------------------
# ROS 2 Jazzy message types, field for field in .msg order


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class Duration(IdlStruct, typename="builtin_interfaces::msg::dds_::Duration_"):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str = ""


@dataclass
class Bool(IdlStruct, typename="std_msgs::msg::dds_::Bool_"):
    data: bool = False


@dataclass
class Float64(IdlStruct, typename="std_msgs::msg::dds_::Float64_"):
    data: float64 = 0.0


@dataclass
class ColorRGBA(IdlStruct, typename="std_msgs::msg::dds_::ColorRGBA_"):
    r: float32 = 0.0
    g: float32 = 0.0
    b: float32 = 0.0
    a: float32 = 0.0


@dataclass
class MultiArrayDimension(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayDimension_"):
    label: str = ""
    size: uint32 = 0
    stride: uint32 = 0


@dataclass
class MultiArrayLayout(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayLayout_"):
    dim: sequence[MultiArrayDimension] = field(default_factory=list)
    data_offset: uint32 = 0


@dataclass
class Float64MultiArray(IdlStruct, typename="std_msgs::msg::dds_::Float64MultiArray_"):
    layout: MultiArrayLayout = field(default_factory=MultiArrayLayout)
    data: sequence[float64] = field(default_factory=list)


@dataclass
class Point(IdlStruct, typename="geometry_msgs::msg::dds_::Point_"):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0


@dataclass
class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0


@dataclass
class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    x: float64 = 0.0
    y: float64 = 0.0
    z: float64 = 0.0
    w: float64 = 1.0


@dataclass
class Pose(IdlStruct, typename="geometry_msgs::msg::dds_::Pose_"):
    position: Point = field(default_factory=Point)
    orientation: Quaternion = field(default_factory=Quaternion)


@dataclass
class PoseStamped(IdlStruct, typename="geometry_msgs::msg::dds_::PoseStamped_"):
    header: Header = field(default_factory=Header)
    pose: Pose = field(default_factory=Pose)


@dataclass
class PoseWithCovariance(IdlStruct, typename="geometry_msgs::msg::dds_::PoseWithCovariance_"):
    pose: Pose = field(default_factory=Pose)
    covariance: array[float64, 36] = field(default_factory=lambda: [0.0] * 36)


@dataclass
class Transform(IdlStruct, typename="geometry_msgs::msg::dds_::Transform_"):
    translation: Vector3 = field(default_factory=Vector3)
    rotation: Quaternion = field(default_factory=Quaternion)


@dataclass
class TransformStamped(IdlStruct, typename="geometry_msgs::msg::dds_::TransformStamped_"):
    header: Header = field(default_factory=Header)
    child_frame_id: str = ""
    transform: Transform = field(default_factory=Transform)


@dataclass
class Twist(IdlStruct, typename="geometry_msgs::msg::dds_::Twist_"):
    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)


@dataclass
class TwistStamped(IdlStruct, typename="geometry_msgs::msg::dds_::TwistStamped_"):
    header: Header = field(default_factory=Header)
    twist: Twist = field(default_factory=Twist)


@dataclass
class Wrench(IdlStruct, typename="geometry_msgs::msg::dds_::Wrench_"):
    force: Vector3 = field(default_factory=Vector3)
    torque: Vector3 = field(default_factory=Vector3)


@dataclass
class WrenchStamped(IdlStruct, typename="geometry_msgs::msg::dds_::WrenchStamped_"):
    header: Header = field(default_factory=Header)
    wrench: Wrench = field(default_factory=Wrench)


@dataclass
class JointState(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    header: Header = field(default_factory=Header)
    name: sequence[str] = field(default_factory=list)
    position: sequence[float64] = field(default_factory=list)
    velocity: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)


@dataclass
class JointTrajectoryPoint(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectoryPoint_"):
    positions: sequence[float64] = field(default_factory=list)
    velocities: sequence[float64] = field(default_factory=list)
    accelerations: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)
    time_from_start: Duration = field(default_factory=Duration)


@dataclass
class JointTrajectory(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectory_"):
    header: Header = field(default_factory=Header)
    joint_names: sequence[str] = field(default_factory=list)
    points: sequence[JointTrajectoryPoint] = field(default_factory=list)


@dataclass
class TFMessage(IdlStruct, typename="tf2_msgs::msg::dds_::TFMessage_"):
    transforms: sequence[TransformStamped] = field(default_factory=list)


@dataclass
class Path(IdlStruct, typename="nav_msgs::msg::dds_::Path_"):
    header: Header = field(default_factory=Header)
    poses: sequence[PoseStamped] = field(default_factory=list)


@dataclass
class DriverStatus(IdlStruct, typename="rpq_interfaces::msg::dds_::DriverStatus_"):
    header: Header = field(default_factory=Header)
    mode: uint8 = 0  # MODE_IDLE=0, MODE_POSITION=1, MODE_VELOCITY=2, MODE_TRAJECTORY=3
    holding: bool = False
    rejected_commands: uint32 = 0
    last_error: str = ""


# Service request/response bodies (without the rmw_cyclonedds header, see ServiceTypes).
# An empty .srv section becomes a struct with one uint8 member, as rosidl generates it.


@dataclass
class Trigger_Request(IdlStruct, typename="std_srvs::srv::dds_::Trigger_Request_"):
    structure_needs_at_least_one_member: uint8 = 0


@dataclass
class Trigger_Response(IdlStruct, typename="std_srvs::srv::dds_::Trigger_Response_"):
    success: bool = False
    message: str = ""


@dataclass
class SetBool_Request(IdlStruct, typename="std_srvs::srv::dds_::SetBool_Request_"):
    data: bool = False


@dataclass
class SetBool_Response(IdlStruct, typename="std_srvs::srv::dds_::SetBool_Response_"):
    success: bool = False
    message: str = ""


@dataclass
class ComputeForwardKinematics_Request(
    IdlStruct, typename="rpq_interfaces::srv::dds_::ComputeForwardKinematics_Request_"
):
    joint_names: sequence[str] = field(default_factory=list)
    positions: sequence[float64] = field(default_factory=list)
    link_name: str = ""


@dataclass
class ComputeForwardKinematics_Response(
    IdlStruct, typename="rpq_interfaces::srv::dds_::ComputeForwardKinematics_Response_"
):
    success: bool = False
    message: str = ""
    pose: PoseStamped = field(default_factory=PoseStamped)


MESSAGES = [
    Time, Duration, Header, String, Bool, Float64, ColorRGBA, MultiArrayDimension,
    MultiArrayLayout, Float64MultiArray, Point, Vector3, Quaternion, Pose, PoseStamped,
    PoseWithCovariance, Transform, TransformStamped, Twist, TwistStamped, Wrench, WrenchStamped,
    JointState, JointTrajectoryPoint, JointTrajectory, TFMessage, Path, DriverStatus,
]
SERVICES = {
    "std_srvs/srv/Trigger": (Trigger_Request, Trigger_Response),
    "std_srvs/srv/SetBool": (SetBool_Request, SetBool_Response),
    "rpq_interfaces/srv/ComputeForwardKinematics": (
        ComputeForwardKinematics_Request, ComputeForwardKinematics_Response),
}
EMPTY_MEMBER = "structure_needs_at_least_one_member"


def ros_name(cls: type) -> str:
    """'std_msgs::msg::dds_::Header_' -> 'std_msgs/msg/Header' (and _Request_ -> _Request)."""
    parts = cls.__idl_typename__.split("::")
    if len(parts) != 4 or parts[2] != "dds_" or not parts[3].endswith("_"):
        raise ValueError(f"{cls.__name__}: {cls.__idl_typename__} is not a ROS 2 DDS type name")
    return f"{parts[0]}/{parts[1]}/{parts[3][:-1]}"


TYPES: Dict[str, type] = {ros_name(c): c for c in MESSAGES}


def lookup_message(spec: str) -> type:
    """'pkg/msg/Type' or 'pkg/Type' -> declared IDL class."""
    parts = spec.strip("/").split("/")
    key = f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 else "/".join(parts)
    if key not in TYPES:
        raise ValueError(f"type {spec!r} is not declared in cyclone_peer.py (have: {sorted(TYPES)})")
    return TYPES[key]


def hints(cls: type) -> Dict[str, Any]:
    """Field name -> annotated type, in declaration (wire) order."""
    return typing.get_type_hints(cls, include_extras=True)


def describe(t: Any) -> str:
    """A field type in the normal form used by `selftest`: float64, string, bool,
    sequence<float64>, float64[36], geometry_msgs/msg/Point, ..."""
    if typing.get_origin(t) is Annotated:
        meta = typing.get_args(t)[1]
        if isinstance(meta, sequence):
            return f"sequence<{describe(meta.subtype)}>"
        if isinstance(meta, array):
            return f"{describe(meta.subtype)}[{meta.length}]"
        if isinstance(meta, str):
            return meta
    if t is bool:
        return "bool"
    if t is str:
        return "string"
    if isinstance(t, type) and issubclass(t, IdlStruct):
        return ros_name(t)
    raise ValueError(f"unsupported field type {t!r}")


# ---------------------------------------------------------------------------------------------
# Values from YAML

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "uint8": (0, 2**8 - 1), "byte": (0, 2**8 - 1),
    "int16": (-(2**15), 2**15 - 1), "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1), "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint64": (0, 2**64 - 1),
}


def convert(t: Any, value: Any, where: str) -> Any:
    kind = describe(t)
    if typing.get_origin(t) is Annotated:
        meta = typing.get_args(t)[1]
        if isinstance(meta, (sequence, array)):
            if not isinstance(value, list):
                raise ValueError(f"{where}: expected a list, got {value!r}")
            if isinstance(meta, array) and len(value) != meta.length:
                raise ValueError(f"{where}: expected {meta.length} values, got {len(value)}")
            return [convert(meta.subtype, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if kind in ("float64", "float32"):
        return float(value)
    if kind in INT_RANGES:
        lo, hi = INT_RANGES[kind]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{where}: expected a {kind}, got {value!r}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true/false, got {value!r}")
        return value
    if kind == "string":
        return str(value)
    return build(t, value, where)


def build(cls: type, data: Any, where: str = "") -> Any:
    """An instance of a declared IDL class from a mapping (parsed YAML); missing fields keep
    their defaults."""
    obj = cls()
    if data is None:
        return obj
    if not isinstance(data, dict):
        raise ValueError(f"{where or cls.__name__}: expected a mapping, got {data!r}")
    fields = hints(cls)
    for key, value in data.items():
        here = f"{where}.{key}" if where else key
        if key not in fields:
            raise ValueError(f"{ros_name(cls)} has no field {here!r} (fields: {list(fields)})")
        setattr(obj, key, convert(fields[key], value, here))
    return obj


# ---------------------------------------------------------------------------------------------
# Service wire types (rmw_cyclonedds_cpp convention)


class ServiceTypes:
    """Wire structs of one service: the request header fields, then the body's fields."""

    def __init__(self, srv: str, reverse_request: bool = False):
        if srv not in SERVICES:
            raise ValueError(f"service type {srv!r} is not declared (have: {sorted(SERVICES)})")
        self.srv = srv
        self.request_body, self.response_body = SERVICES[srv]
        self.request = self._wire(self.request_body, "RequestWire", reverse_request)
        self.response = self._wire(self.response_body, "ResponseWire")

    @staticmethod
    def _wire(body: type, suffix: str, reverse: bool = False) -> type:
        fields = {"client_guid": uint64, "sequence_number": int64}
        body_fields = list(hints(body).items())
        fields.update(reversed(body_fields) if reverse else body_fields)
        return make_idl_struct(f"{body.__name__}{suffix}", body.__idl_typename__, fields)

    @staticmethod
    def wrap(wire: type, body: Any, guid: int, seq: int) -> Any:
        values = {f.name: getattr(body, f.name) for f in dataclasses.fields(body)}
        return wire(client_guid=guid, sequence_number=seq, **values)

    @staticmethod
    def unwrap(body_cls: type, wire_sample: Any) -> Any:
        return body_cls(**{f.name: getattr(wire_sample, f.name) for f in dataclasses.fields(body_cls)})


def service_topics(name: str) -> Tuple[str, str]:
    """'/compute_fk' -> ('rq/compute_fkRequest', 'rr/compute_fkReply')."""
    base = name if name.startswith("/") else "/" + name
    return f"rq{base}Request", f"rr{base}Reply"


def reversed_struct(cls: type) -> type:
    """`cls` with its top-level fields in reverse order under the same DDS type name: a wrong
    declaration on purpose, for negative controls (`--reverse-fields`)."""
    fields = dict(reversed(list(hints(cls).items())))
    return make_idl_struct(f"{cls.__name__}Reversed", cls.__idl_typename__, fields)


def dds_topic(name: str) -> str:
    """ROS topic '/joint_states' -> DDS topic 'rt/joint_states'; 'rt/...' is kept."""
    if name.startswith(("rt/", "rq/", "rr/")):
        return name
    return "rt" + (name if name.startswith("/") else "/" + name)


# ---------------------------------------------------------------------------------------------
# DDS


def make_qos(kind: str, depth: int) -> Any:
    from cyclonedds.core import Policy, Qos
    from cyclonedds.util import duration

    reliability = (Policy.Reliability.BestEffort if kind == "best_effort"
                   else Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100)))
    durability = Policy.Durability.TransientLocal if kind == "latched" else Policy.Durability.Volatile
    return Qos(
        reliability, durability, Policy.History.KeepLast(depth),
        # XCDR1 only, as rmw_cyclonedds_cpp does: ROS 2 peers expect plain CDR.
        Policy.DataRepresentation(use_cdrv0_representation=True, use_xcdrv2_representation=False),
    )


class Dds:
    def __init__(self, args: argparse.Namespace):
        from cyclonedds.domain import DomainParticipant

        if not os.environ.get("CYCLONEDDS_URI"):
            log("warning: CYCLONEDDS_URI is not set; Cyclone picks an interface by itself")
        self.args = args
        self.deadline = Deadline(args.timeout)
        domain = args.domain if args.domain is not None else int(os.environ.get("ROS_DOMAIN_ID", "0"))
        self.participant = DomainParticipant(domain)

    def topic(self, name: str, cls: type) -> Any:
        from cyclonedds.topic import Topic

        return Topic(self.participant, name, cls)

    def reader(self, name: str, cls: type, qos: str, depth: int = 10) -> Any:
        from cyclonedds.sub import DataReader

        return DataReader(self.participant, self.topic(name, cls), qos=make_qos(qos, depth))

    def writer(self, name: str, cls: type, qos: str, depth: int = 10) -> Any:
        from cyclonedds.pub import DataWriter

        return DataWriter(self.participant, self.topic(name, cls), qos=make_qos(qos, depth))

    def wait(self, done: Callable[[], bool], deadline: Optional[Deadline] = None) -> bool:
        deadline = deadline or self.deadline
        while not done():
            if deadline.expired():
                return done()
            time.sleep(0.005)
        return True

    @staticmethod
    def take(reader: Any, cls: type) -> List[Any]:
        """Valid samples now in the reader (dispose/unregister notifications are dropped)."""
        return [s for s in reader.take(N=64) if isinstance(s, cls)]

    def wait_writer_matched(self, writer: Any, what: str, minimum: int = 1) -> int:
        ok = self.wait(lambda: len(writer.get_matched_subscriptions()) >= minimum)
        n = len(writer.get_matched_subscriptions())
        if not ok:
            fail(f"{what}: no matching reader within {self.args.timeout} s", matched=n)
        return n

    def wait_reader_matched(self, reader: Any, what: str, minimum: int = 1) -> int:
        ok = self.wait(lambda: len(reader.get_matched_publications()) >= minimum)
        n = len(reader.get_matched_publications())
        if not ok:
            fail(f"{what}: no matching writer within {self.args.timeout} s", matched=n)
        return n


# ---------------------------------------------------------------------------------------------
# Subcommands


def cmd_sub(d: Dds, a: argparse.Namespace) -> None:
    cls = lookup_message(a.type)
    topic = dds_topic(a.topic)
    reader = d.reader(topic, cls, a.qos, max(a.depth, 1))
    count = 0
    while count < a.count:
        samples: List[Any] = []
        if not d.wait(lambda: bool(samples.extend(Dds.take(reader, cls)) or samples)):
            fail(f"received {count} of {a.count} samples on {topic} within {a.timeout} s",
                 received=count)
        for s in samples[: a.count - count]:
            emit("message", topic=topic, type=ros_name(cls), dds_type=cls.__idl_typename__,
                 index=count, recv_time=round(time.time(), 6), data=plain(s))
            count += 1
    emit("done", count=count)


def cmd_pub(d: Dds, a: argparse.Namespace) -> None:
    import yaml

    cls = lookup_message(a.type)
    try:
        sample = build(cls, yaml.safe_load(a.yaml) if a.yaml else {})
    except (ValueError, TypeError, yaml.YAMLError) as e:
        fail(f"cannot build {a.type} from {a.yaml!r}: {e}")
    topic = dds_topic(a.topic)
    if a.reverse_fields:
        wrong = reversed_struct(cls)
        sample = wrong(**{f.name: getattr(sample, f.name) for f in dataclasses.fields(sample)})
        cls = wrong
    writer = d.writer(topic, cls, a.qos, max(a.depth, 1))
    matched = 0
    if a.wait_subscribers > 0:
        matched = d.wait_writer_matched(writer, f"writer on {topic}", a.wait_subscribers)
    for i in range(a.count):
        writer.write(sample)
        if i + 1 < a.count:
            time.sleep(1.0 / a.rate)
    if a.linger > 0:  # reliable retransmissions and acks
        time.sleep(min(a.linger, d.deadline.remaining()))
    emit("published", topic=topic, type=ros_name(cls), dds_type=cls.__idl_typename__,
         count=a.count, matched=matched, reverse_fields=a.reverse_fields, data=plain(sample))


def call_service(d: Dds, a: argparse.Namespace, srv: str, request_body: Any) -> None:
    types = ServiceTypes(srv, reverse_request=a.reverse_fields)
    rq, rr = service_topics(a.service)
    writer = d.writer(rq, types.request, "reliable")
    reader = d.reader(rr, types.response, "reliable")
    # Like rmw_cyclonedds: the client guid is the request writer's instance handle.
    guid = writer.get_instance_handle() & 0xFFFF_FFFF_FFFF_FFFF
    d.wait_writer_matched(writer, f"request writer {rq}")
    d.wait_reader_matched(reader, f"reply reader {rr}")
    seq = 0
    foreign = 0
    while not d.deadline.expired():
        seq += 1
        writer.write(ServiceTypes.wrap(types.request, request_body, guid, seq))
        attempt = Deadline(min(a.attempt_timeout, d.deadline.remaining()))
        reply: List[Any] = []

        def poll() -> bool:
            nonlocal foreign
            for s in Dds.take(reader, types.response):
                if s.client_guid == guid and s.sequence_number == seq:
                    reply.append(s)
                else:
                    foreign += 1
            return bool(reply)

        if d.wait(poll, attempt):
            body = ServiceTypes.unwrap(types.response_body, reply[0])
            emit("response", service=a.service, type=srv, request_topic=rq, reply_topic=rr,
                 attempts=seq, client_guid=guid, sequence_number=seq, ignored_replies=foreign,
                 elapsed_s=round(d.deadline.elapsed(), 3), response=plain(body))
            return
        log(f"no reply on {rr} within {a.attempt_timeout} s (attempt {seq}), resending")
    fail(f"service {a.service}: no reply within {a.timeout} s", attempts=seq,
         ignored_replies=foreign)


def cmd_call(d: Dds, a: argparse.Namespace) -> None:
    import yaml

    try:
        types = ServiceTypes(a.type)
        body = build(types.request_body, yaml.safe_load(a.request_yaml) if a.request_yaml else {})
    except (ValueError, TypeError, yaml.YAMLError) as e:
        fail(f"cannot build a {a.type} request from {a.request_yaml!r}: {e}")
    call_service(d, a, a.type, body)


def cmd_call_fk(d: Dds, a: argparse.Namespace) -> None:
    body = ComputeForwardKinematics_Request(
        joint_names=parse_names(a.joint_names), positions=parse_floats(a.positions),
        link_name=a.link)
    call_service(d, a, "rpq_interfaces/srv/ComputeForwardKinematics", body)


def cmd_serve(d: Dds, a: argparse.Namespace) -> None:
    import yaml

    try:
        types = ServiceTypes(a.type)
        template = yaml.safe_load(a.response_yaml) if a.response_yaml else {}
        build(types.response_body, template)
    except (ValueError, TypeError, yaml.YAMLError) as e:
        fail(f"cannot build a {a.type} response from {a.response_yaml!r}: {e}")
    rq, rr = service_topics(a.service)
    reader = d.reader(rq, types.request, "reliable")
    writer = d.writer(rr, types.response, "reliable")
    emit("ready", service=a.service, type=a.type, request_topic=rq, reply_topic=rr)
    served = 0
    while not d.deadline.expired() and (a.count == 0 or served < a.count):
        for s in Dds.take(reader, types.request):
            body = build(types.response_body, template)
            writer.write(ServiceTypes.wrap(types.response, body, s.client_guid, s.sequence_number))
            emit("request", service=a.service, type=a.type, index=served,
                 client_guid=s.client_guid, sequence_number=s.sequence_number,
                 request=plain(ServiceTypes.unwrap(types.request_body, s)), response=plain(body))
            served += 1
        time.sleep(0.005)
    if a.count > 0 and served < a.count:
        fail(f"served {served} of {a.count} requests within {a.timeout} s", served=served)
    time.sleep(min(a.linger, max(0.0, d.deadline.remaining())))
    emit("served", count=served)


def cmd_types(_: Any, a: argparse.Namespace) -> None:
    for cls in MESSAGES + [c for pair in SERVICES.values() for c in pair]:
        emit("type", name=ros_name(cls), dds_type=cls.__idl_typename__,
             fields=[[k, describe(t)] for k, t in hints(cls).items()])


# ---------------------------------------------------------------------------------------------
# selftest: the declarations against two third-party sources, no sockets


def rclpy_fields(ros: str) -> Optional[List[List[str]]]:
    """Field list of a type from rclpy's generated class, normalised like describe()."""
    import importlib

    pkg, kind, name = ros.split("/")
    suffix = None
    for s in ("_Request", "_Response"):
        if kind == "srv" and name.endswith(s):
            name, suffix = name[: -len(s)], s[1:]
    try:
        cls = getattr(importlib.import_module(f"{pkg}.{kind}"), name)
    except (ImportError, AttributeError):
        return None
    if suffix:
        cls = getattr(cls, suffix)
    names = {"double": "float64", "float": "float32", "boolean": "bool", "octet": "byte"}

    def norm(t: str) -> str:
        if t.startswith("sequence<") and t.endswith(">"):
            return f"sequence<{norm(t[9:-1])}>"
        if t.endswith("]"):
            base, n = t[:-1].split("[")
            return f"{norm(base)}[{n}]"
        if "/" in t:
            p, n = t.split("/")
            return f"{p}/msg/{n}"
        return names.get(t, t)

    return [[k, norm(v)] for k, v in cls.get_fields_and_field_types().items()]


def rosbags_fields(store: Any, ros: str) -> Optional[List[List[str]]]:
    from rosbags.typesys.base import Nodetype

    if ros not in store.fielddefs:
        return None

    def norm(node: Any) -> str:
        kind, detail = node
        if kind == Nodetype.BASE:
            return detail[0]
        if kind == Nodetype.NAME:
            return detail
        if kind == Nodetype.SEQUENCE:
            return f"sequence<{norm(detail[0])}>"
        if kind == Nodetype.ARRAY:
            return f"{norm(detail[0])}[{detail[1]}]"
        raise ValueError(f"unknown rosbags node {node!r}")

    return [[k, norm(v)] for k, v in store.fielddefs[ros][1]]


def sample_value(t: Any, seed: int) -> Any:
    """A deterministic, non-default value for a field type (for the CDR round trip)."""
    if typing.get_origin(t) is Annotated:
        meta = typing.get_args(t)[1]
        if isinstance(meta, array):
            return [sample_value(meta.subtype, seed + i) for i in range(meta.length)]
        if isinstance(meta, sequence):
            return [sample_value(meta.subtype, seed + i) for i in range(1 + seed % 3)]
    kind = describe(t)
    if kind == "float64":
        return [1e300, -0.0, 5e-324, 0.1, -2.5][seed % 5] * (seed + 1)
    if kind == "float32":
        return [0.5, -1.25, 3.0][seed % 3]
    if kind in INT_RANGES:
        lo, hi = INT_RANGES[kind]
        return [hi, lo, 7][seed % 3]
    if kind == "bool":
        return seed % 2 == 1
    if kind == "string":
        return ["", "frame_ä", "x" * (seed % 7)][seed % 3]
    return sample_struct(t, seed)


def sample_struct(cls: type, seed: int) -> Any:
    return cls(**{k: sample_value(t, seed + i) for i, (k, t) in enumerate(hints(cls).items())})


def cmd_selftest(_: Any, a: argparse.Namespace) -> None:
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    msg_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "msg")
    custom: Dict[str, Any] = {}
    d = os.path.join(msg_dir, "msg")
    for f in sorted(os.listdir(d)):
        if f.endswith(".msg"):
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                custom.update(get_types_from_msg(fh.read(), f"rpq_interfaces/msg/{f[:-4]}"))
    d = os.path.join(msg_dir, "srv")
    for f in sorted(os.listdir(d)):
        if f.endswith(".srv"):
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                request, response = fh.read().split("\n---\n")
            # rosbags names message types pkg/msg/Name only: file the parts under msg/.
            for part, text in (("Request", request), ("Response", response)):
                custom.update(get_types_from_msg(text, f"rpq_interfaces/msg/{f[:-4]}_{part}"))
    store.register(custom)
    problems: List[str] = []
    checked = 0
    all_types = MESSAGES + [c for pair in SERVICES.values() for c in pair]
    for cls in all_types:
        ros = ros_name(cls)
        ours = [[k, describe(t)] for k, t in hints(cls).items()]
        theirs = rclpy_fields(ros)
        if theirs is None:
            if not ros.startswith("tf2_msgs/"):  # tf2_msgs is not on PyPI
                problems.append(f"{ros}: not importable from rclpy")
        else:
            compare = [f for f in ours if f[0] != EMPTY_MEMBER]
            if compare != theirs:
                problems.append(f"{ros}: fields {compare} != rclpy {theirs}")
            checked += 1
        bag_name = ros.replace("/srv/", "/msg/")
        bag = rosbags_fields(store, bag_name)
        if bag is not None:
            if ours != bag:
                problems.append(f"{ros}: fields {ours} != rosbags {bag}")
            checked += 1
            # CDR written by Cyclone decodes in rosbags to the same values, and back.
            sample = sample_struct(cls, 3)
            raw = sample.serialize()
            if raw[:4] != b"\x00\x01\x00\x00":
                problems.append(f"{ros}: Cyclone wrote encapsulation {raw[:4].hex()}, not CDR_LE")
            decoded = store.deserialize_cdr(raw, bag_name)
            if plain(decoded) != plain(sample):
                problems.append(f"{ros}: rosbags decoded {plain(decoded)} != {plain(sample)}")
            back = cls.deserialize(store.serialize_cdr(decoded, bag_name))
            if plain(back) != plain(sample):
                problems.append(f"{ros}: rosbags-encoded CDR decoded by Cyclone differs")
            checked += 1
    # The service wire layout: 16-byte header, then the body at offset 16 (8-aligned).
    types = ServiceTypes("rpq_interfaces/srv/ComputeForwardKinematics")
    body = sample_struct(ComputeForwardKinematics_Request, 1)
    raw = ServiceTypes.wrap(types.request, body, 0x0102030405060708, 42).serialize()
    expect = b"\x00\x01\x00\x00" + (0x0102030405060708).to_bytes(8, "little") + (42).to_bytes(8, "little")
    if raw[:20] != expect or raw[20:] != body.serialize()[4:]:
        problems.append(f"request wire layout unexpected: {raw[:24].hex()}")
    checked += 1
    if problems:
        fail(f"{len(problems)} declaration problems", problems=problems, checked=checked)
    emit("selftest", ok=True, types=len(all_types), checks=checked)


# ---------------------------------------------------------------------------------------------
# Command line


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--domain", type=int, default=argparse.SUPPRESS,
                        help="DDS domain = ROS domain id (default: $ROS_DOMAIN_ID, else 0)")
    common.add_argument("--timeout", type=float, default=argparse.SUPPRESS,
                        help="give up after this many seconds (default 20)")
    common.add_argument("--attempt-timeout", type=float, default=argparse.SUPPRESS,
                        help="service calls: resend after this many seconds without reply (default 2)")
    top = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--domain", type=int, default=None)
    top.add_argument("--timeout", type=float, default=20.0)
    top.add_argument("--attempt-timeout", type=float, default=2.0)
    sub = top.add_subparsers(dest="cmd", required=True)

    def add(name: str, fn: Callable, help_text: str, dds: bool = True) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, parents=[common], help=help_text)
        sp.set_defaults(fn=fn, dds=dds)
        return sp

    sp = add("sub", cmd_sub, "print N samples of a topic")
    sp.add_argument("--topic", required=True, help="ROS name (/joint_states) or DDS name (rt/...)")
    sp.add_argument("--type", required=True, help="pkg/msg/Type (see `types`)")
    sp.add_argument("--count", type=int, default=1)
    sp.add_argument("--qos", choices=["reliable", "best_effort", "latched"], default="reliable")
    sp.add_argument("--depth", type=int, default=10)

    sp = add("pub", cmd_pub, "publish a sample given as YAML")
    sp.add_argument("--reverse-fields", action="store_true",
                    help="negative control: send the top-level fields in reverse order")
    sp.add_argument("--topic", required=True)
    sp.add_argument("--type", required=True)
    sp.add_argument("--yaml", default="{}")
    sp.add_argument("--count", type=int, default=1)
    sp.add_argument("--rate", type=float, default=10.0)
    sp.add_argument("--qos", choices=["reliable", "best_effort", "latched"], default="reliable")
    sp.add_argument("--depth", type=int, default=10)
    sp.add_argument("--wait-subscribers", type=int, default=1)
    sp.add_argument("--linger", type=float, default=0.5)

    sp = add("call", cmd_call, "call a service (rmw_cyclonedds_cpp wire convention)")
    sp.add_argument("--reverse-fields", action="store_true",
                    help="negative control: send the top-level fields in reverse order")
    sp.add_argument("--service", required=True)
    sp.add_argument("--type", required=True, choices=sorted(SERVICES))
    sp.add_argument("--request-yaml", default="{}")

    sp = add("call-fk", cmd_call_fk, "call rpq_interfaces/srv/ComputeForwardKinematics")
    sp.add_argument("--reverse-fields", action="store_true",
                    help="negative control: send the top-level fields in reverse order")
    sp.add_argument("--service", default="/compute_forward_kinematics")
    sp.add_argument("--joint-names", default="")
    sp.add_argument("--positions", default="")
    sp.add_argument("--link", default="")

    sp = add("serve", cmd_serve, "answer a service (rmw_cyclonedds_cpp wire convention)")
    sp.add_argument("--service", required=True)
    sp.add_argument("--type", required=True, choices=sorted(SERVICES))
    sp.add_argument("--response-yaml", default="{}")
    sp.add_argument("--count", type=int, default=1, help="requests to answer (0: until --timeout)")
    sp.add_argument("--linger", type=float, default=0.5)

    add("types", cmd_types, "list the declared types and their fields", dds=False)
    add("selftest", cmd_selftest,
        "check the declarations against rclpy and rosbags, round-trip CDR (no sockets)", dds=False)
    return top


def main() -> int:
    args = build_parser().parse_args()
    if args.timeout <= 0:
        log("--timeout must be positive")
        return EXIT_USAGE
    if args.dds:
        require_private_netns()
    start_watchdog(args.timeout)
    code = 0
    try:
        args.fn(Dds(args) if args.dds else None, args)
    except SystemExit as e:
        code = int(e.code or 0)
    except ValueError as e:  # bad input (unknown type, field, value): no traceback needed
        emit("error", reason=str(e))
        code = 1
    except Exception as e:
        import traceback

        traceback.print_exc()
        emit("error", reason=f"{type(e).__name__}: {e}")
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
