#!/usr/bin/env python3
"""Third-party peer for rpq_bag: reads and writes rosbag2 MCAP bags with `rosbags` and
`mcap-ros2-support`, printing every message as one canonical text line.

    bag_peer.py read BAG_DIR      decode BAG_DIR with three readers, print lines
    bag_peer.py write BAG_DIR     write a bag with rosbags' Writer, print what was written
    bag_peer.py truncated FILE    what `mcap`'s readers make of an MCAP file cut short

Line format (tab separated): reader, topic, type, log_time, fields. Fields are `k=v` joined
by `,`; strings are hex of their UTF-8 bytes, floats hex of their little-endian IEEE bytes,
sequences `;`-joined. The readers are:
  anyreader   rosbags.highlevel.AnyReader, types taken only from the bag's definitions
  rosbag2     rosbags.rosbag2.Reader + deserialisation with the same types
  mcap_ros2   mcap_ros2.reader.read_ros2_messages on the bag's .mcap file
`read` also prints `meta` lines: the topic list with counts and QoS seen by rosbag2.Reader.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path


def hexs(text: str) -> str:
    return text.encode('utf-8').hex()


def hexf(value: float) -> str:
    return struct.pack('<d', value).hex()


def fields(msgtype: str, msg) -> str:
    if msgtype == 'std_msgs/msg/String':
        return f'data={hexs(msg.data)}'
    if msgtype == 'sensor_msgs/msg/JointState':
        h = msg.header
        return ','.join([
            f'sec={h.stamp.sec}',
            f'nanosec={h.stamp.nanosec}',
            f'frame_id={hexs(h.frame_id)}',
            'name=' + ';'.join(hexs(n) for n in msg.name),
            'position=' + ';'.join(hexf(float(x)) for x in msg.position),
            'velocity=' + ';'.join(hexf(float(x)) for x in msg.velocity),
            'effort=' + ';'.join(hexf(float(x)) for x in msg.effort),
        ])
    raise SystemExit(f'bag_peer: unexpected type {msgtype}')


def read(bag: Path) -> None:
    from rosbags.highlevel import AnyReader
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    # Empty default store: AnyReader must build its types from the bag's definitions.
    with AnyReader([bag], default_typestore=get_typestore(Stores.EMPTY)) as reader:
        typestore = reader.typestore
        for conn, timestamp, raw in reader.messages():
            msg = reader.deserialize(raw, conn.msgtype)
            print('anyreader', conn.topic, conn.msgtype, timestamp,
                  fields(conn.msgtype, msg), sep='\t')

    with Reader(bag) as reader:
        for conn in reader.connections:
            qos = conn.ext.offered_qos_profiles
            q = ';'.join(
                f'{p.history.name.lower()}/{p.depth}/{p.reliability.name.lower()}/'
                f'{p.durability.name.lower()}' for p in qos)
            print('meta', conn.topic, conn.msgtype, conn.msgcount,
                  f'serialization={conn.ext.serialization_format},digest={conn.digest},'
                  f'qos={q}', sep='\t')
        print('meta', '*', '*', reader.message_count,
              f'duration={reader.duration},start={reader.start_time},'
              f'distro={reader.ros_distro}', sep='\t')
        for conn, timestamp, raw in reader.messages():
            msg = typestore.deserialize_cdr(raw, conn.msgtype)
            print('rosbag2', conn.topic, conn.msgtype, timestamp,
                  fields(conn.msgtype, msg), sep='\t')

    from mcap_ros2.reader import read_ros2_messages

    files = sorted(bag.glob('*.mcap'))
    if len(files) != 1:
        raise SystemExit(f'bag_peer: expected one .mcap in {bag}, found {files}')
    for m in read_ros2_messages(str(files[0])):
        print('mcap_ros2', m.channel.topic, m.schema.name, m.log_time_ns,
              fields(m.schema.name, m.ros_msg), sep='\t')


def write(bag: Path) -> None:
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.interfaces import (
        Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime,
    )
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    String = store.types['std_msgs/msg/String']
    JointState = store.types['sensor_msgs/msg/JointState']
    Header = store.types['std_msgs/msg/Header']
    Time = store.types['builtin_interfaces/msg/Time']
    import numpy as np

    inf = QosTime(9223372036, 854775807)
    latched = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE,
                  QosDurability.TRANSIENT_LOCAL, inf, inf, QosLiveliness.AUTOMATIC, inf, False)
    t0 = 1_700_000_000_000_000_000
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        chatter = writer.add_connection('/chatter', String.__msgtype__, typestore=store,
                                        offered_qos_profiles=[latched])
        joints = writer.add_connection('/joint_states', JointState.__msgtype__,
                                       typestore=store)
        for i in range(4):
            msg = String(data=f'peer {i} ✓')
            t = t0 + 3 * i * 1_000_000
            writer.write(chatter, t, store.serialize_cdr(msg, String.__msgtype__))
            print('written', '/chatter', String.__msgtype__, t,
                  fields(String.__msgtype__, msg), sep='\t')
        for i in range(5):
            js = JointState(
                header=Header(stamp=Time(sec=100 + i, nanosec=7 * i), frame_id='world'),
                name=[f'j{k}' for k in range(3)],
                position=np.array([0.5 * i, -0.0, 1e-310], dtype=np.float64),
                velocity=np.array([], dtype=np.float64),
                effort=np.array([1e300, -2.5, i], dtype=np.float64),
            )
            # Deliberately written out of log-time order.
            t = t0 + (10 - 2 * i) * 1_000_000
            writer.write(joints, t, store.serialize_cdr(js, JointState.__msgtype__))
            print('written', '/joint_states', JointState.__msgtype__, t,
                  fields(JointState.__msgtype__, js), sep='\t')


def truncated(path: Path) -> None:
    """One line per reader: reader, messages yielded, outcome (`ok` or the exception).

    `seeking` is mcap.reader.make_reader on the open file (what read_ros2_messages uses): it
    looks for the footer first. `nonseeking` is NonSeekingReader with its defaults (messages
    in log-time order: it reads everything before yielding); `streaming` is NonSeekingReader
    in file order, which yields each chunk's messages as it reads them."""
    from mcap.reader import NonSeekingReader, make_reader

    readers = (
        ('seeking', make_reader, {}),
        ('nonseeking', NonSeekingReader, {}),
        ('streaming', NonSeekingReader, {'log_time_order': False}),
    )
    for name, factory, options in readers:
        count = 0
        outcome = 'ok'
        with open(path, 'rb') as stream:
            try:
                for _schema, _channel, _message in factory(stream).iter_messages(**options):
                    count += 1
            except Exception as e:  # report whatever the reader raises
                outcome = f'{type(e).__name__}: {e}'.replace('\t', ' ').replace('\n', ' ')
        print(name, count, outcome, sep='\t')


def main() -> None:
    modes = {'read': read, 'write': write, 'truncated': truncated}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        raise SystemExit(__doc__)
    modes[sys.argv[1]](Path(sys.argv[2]))


if __name__ == '__main__':
    main()
