#!/usr/bin/env python3
"""Cross-check rpq_ros' CDR bytes and message definitions against third-party implementations.

Input: a YAML file written by nodes/rpq_ros/tests/cdr_crosscheck.rs with
  packages:    {name: directory of a rosidl package (msg/*.msg, srv/*.srv)}
  definitions: [{type, definition}]                 every type rpq_ros knows
  cases:       [{type, definition, cdr, value}]     messages encoded by rpq_ros (cdr in hex)

Reference types: rosbags' ROS 2 Jazzy type store; the packages above (and std_srvs) are added to
it by parsing their .msg/.srv files with rosbags, independently of rpq_ros' code generator.

Checks:
  1. every definition text parses with rosbags' get_types_from_msg and yields, for the type and
     every nested type, the same constants and field names/types as the reference store;
  2. every case: rosbags' serialize_cdr of the value gives exactly rpq_ros' bytes, rosbags'
     deserialize_cdr of rpq_ros' bytes gives the value back (floats compared bit for bit);
  3. if mcap-ros2-support is installed: its decoder, built from rpq_ros' definition text as a
     rosbag2 MCAP reader would, decodes rpq_ros' bytes to the same value.

Exit status 0 if everything matches; otherwise every mismatch is printed and the status is 1.
"""

from __future__ import annotations

import argparse
import math
import struct
import sys
from pathlib import Path

import numpy as np
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from ruamel.yaml import YAML

try:
    from mcap_ros2._dynamic import generate_dynamic
except ImportError:  # optional peer
    generate_dynamic = None

DTYPES = {
    'bool': np.bool_,
    'byte': np.uint8,
    'char': np.uint8,
    'int8': np.int8,
    'uint8': np.uint8,
    'int16': np.int16,
    'uint16': np.uint16,
    'int32': np.int32,
    'uint32': np.uint32,
    'int64': np.int64,
    'uint64': np.uint64,
    'float32': np.float32,
    'float64': np.float64,
}

PLACEHOLDER = 'structure_needs_at_least_one_member'


def split_srv(text: str) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    seps = [i for i, line in enumerate(lines) if line.rstrip() == '---']
    if len(seps) != 1:
        raise ValueError('a .srv file needs exactly one --- line')
    return ''.join(lines[: seps[0]]), ''.join(lines[seps[0] + 1 :])


def types_from_text(text: str, typename: str) -> dict:
    """get_types_from_msg, also for service halves (`pkg/srv/Name_Request`).

    rosbags resolves same-package names relative to the root type's namespace and turns
    `pkg/srv/X` into `pkg/srv/msg/X`; parse halves as `pkg/msg/X` and rename the root back.
    """
    pkg, ns, name = typename.split('/')
    parsed = get_types_from_msg(text, f'{pkg}/msg/{name}')
    if ns == 'msg':
        return parsed
    return {(typename if k == f'{pkg}/msg/{name}' else k): v for k, v in parsed.items()}


def package_types(name: str, directory: Path) -> dict:
    types = {}
    for path in sorted((directory / 'msg').glob('*.msg')):
        types.update(types_from_text(path.read_text(), f'{name}/msg/{path.stem}'))
    for path in sorted((directory / 'srv').glob('*.srv')):
        request, response = split_srv(path.read_text())
        types.update(types_from_text(request, f'{name}/srv/{path.stem}_Request'))
        types.update(types_from_text(response, f'{name}/srv/{path.stem}_Response'))
    return types


def normalized(fielddef):
    """(constants, fields) with rosidl's placeholder member for empty structures."""
    consts, fields = fielddef
    consts = sorted((c[0], c[1], repr(c[2])) for c in consts)
    fields = list(fields)
    if not fields:
        fields = [(PLACEHOLDER, (Nodetype.BASE, ('uint8', 0)))]
    return consts, fields


class Checker:
    def __init__(self, store):
        self.store = store
        self.errors: list[str] = []
        self.checked = 0
        self.failed = 0

    def fail(self, message: str) -> None:
        self.errors.append(message)

    # -- definitions --

    def check_definition(self, typename: str, text: str) -> None:
        before = len(self.errors)
        self.checked += 1
        self._check_definition(typename, text)
        self.failed += len(self.errors) > before

    def _check_definition(self, typename: str, text: str) -> None:
        try:
            parsed = types_from_text(text, typename)
        except Exception as e:  # noqa: BLE001 - any parser failure is a finding
            self.fail(f'{typename}: rosbags cannot parse the definition: {e}')
            return
        if typename not in parsed:
            self.fail(f'{typename}: definition does not define {typename} ({sorted(parsed)})')
        for name, fielddef in parsed.items():
            ref = self.store.fielddefs.get(name)
            if ref is None:
                self.fail(f'{typename}: nested type {name} unknown to the reference store')
            elif normalized(fielddef) != normalized(ref):
                self.fail(
                    f'{typename}: {name} differs from the reference:\n'
                    f'  ours: {normalized(fielddef)}\n  ref:  {normalized(ref)}'
                )

    # -- values --

    def build(self, typename: str, value):
        cls = self.store.types[typename]
        _, fields = self.store.fielddefs[typename]
        kwargs = {}
        for name, desc in fields:
            kwargs[name] = self.build_field(desc, value[name])
        return cls(**kwargs)

    def build_field(self, desc, value, in_array=False):
        kind, info = desc
        if kind == Nodetype.BASE:
            base = info[0]
            if base == 'string':
                return str(value)
            if base in ('float32', 'float64'):
                value = float(value)
                # YAML's .nan may come back with the sign bit set; rpq_ros writes the canonical
                # quiet NaN (0x7ff8...), as does math.nan.
                return math.nan if math.isnan(value) else value
            if base == 'bool':
                return bool(value)
            if base == 'byte' and int(value) > 127 and not in_array:
                # rosbags reads a `byte` field as a signed octet (arrays as unsigned), rosidl as
                # unsigned: same bits.
                return int(value) - 256
            return int(value)
        if kind == Nodetype.NAME:
            return self.build(info, value)
        sub, _size = info
        if sub[0] == Nodetype.BASE and sub[1][0] != 'string':
            items = [self.build_field(sub, v, in_array=True) for v in value]
            return np.array(items, dtype=DTYPES[sub[1][0]])
        return [self.build_field(sub, v) for v in value]

    def compare(self, where: str, desc, got, want) -> None:
        kind, info = desc
        if kind == Nodetype.BASE:
            base = info[0]
            if base in ('float32', 'float64'):
                fmt = '<f' if base == 'float32' else '<d'
                if math.isnan(float(got)) and math.isnan(float(want)):
                    return  # NaN payloads: the byte comparison checks them
                if struct.pack(fmt, float(got)) != struct.pack(fmt, float(want)):
                    self.fail(f'{where}: {got!r} != {want!r}')
            elif base == 'string':
                if got != want:
                    self.fail(f'{where}: {got!r} != {want!r}')
            elif base in ('byte', 'char'):
                # One octet each; peers differ in reading it signed or unsigned (rosidl: unsigned).
                if (int(got) - int(want)) % 256 != 0:
                    self.fail(f'{where}: {got!r} != {want!r} (as octets)')
            elif int(got) != int(want):
                self.fail(f'{where}: {got!r} != {want!r}')
        elif kind == Nodetype.NAME:
            _, fields = self.store.fielddefs[info]
            for name, sub in fields:
                self.compare(f'{where}.{name}', sub, get(got, name), want[name])
        else:
            sub, _size = info
            got = list(got)
            if len(got) != len(want):
                self.fail(f'{where}: length {len(got)} != {len(want)}')
                return
            for i, (g, w) in enumerate(zip(got, want)):
                self.compare(f'{where}[{i}]', sub, g, w)

    def check_case(self, index: int, case: dict) -> None:
        before = len(self.errors)
        self.checked += 1
        self._check_case(index, case)
        self.failed += len(self.errors) > before

    def _check_case(self, index: int, case: dict) -> None:
        typename = case['type']
        ours = bytes.fromhex(case['cdr'])
        value = case['value']
        label = f'case {index} ({typename})'
        if typename not in self.store.types:
            self.fail(f'{label}: type unknown to the reference store')
            return
        desc = (Nodetype.NAME, typename)
        try:
            theirs = self.store.serialize_cdr(self.build(typename, value), typename)
        except Exception as e:  # noqa: BLE001
            self.fail(f'{label}: rosbags cannot serialize the value: {e}')
        else:
            if bytes(theirs) != ours:
                self.fail(
                    f'{label}: bytes differ\n  rpq_ros: {ours.hex()}\n  rosbags: {bytes(theirs).hex()}'
                )
        try:
            decoded = self.store.deserialize_cdr(ours, typename)
        except Exception as e:  # noqa: BLE001
            self.fail(f'{label}: rosbags cannot decode rpq_ros bytes: {e}')
        else:
            self.compare(label, desc, decoded, value)
        if generate_dynamic is not None:
            try:
                decoders = generate_dynamic(typename, case['definition'])
                decoded = decoders[typename](ours)
            except Exception as e:  # noqa: BLE001
                self.fail(f'{label}: mcap-ros2-support cannot decode rpq_ros bytes: {e}')
            else:
                self.compare_loose(f'{label} [mcap]', desc, decoded, value)

    def compare_loose(self, where, desc, got, want):
        """Like compare, but mcap-ros2-support leaves out rosidl's placeholder member."""
        kind, info = desc
        if kind == Nodetype.NAME:
            _, fields = self.store.fielddefs[info]
            for name, sub in fields:
                if name == PLACEHOLDER:
                    continue
                self.compare_loose(f'{where}.{name}', sub, get(got, name), want[name])
        elif kind == Nodetype.BASE:
            self.compare(where, desc, got, want)
        else:
            sub, _size = info
            got = list(got)
            if len(got) != len(want):
                self.fail(f'{where}: length {len(got)} != {len(want)}')
                return
            for i, (g, w) in enumerate(zip(got, want)):
                self.compare_loose(f'{where}[{i}]', sub, g, w)


def get(obj, name):
    if isinstance(obj, dict):
        return obj[name]
    return getattr(obj, name)


def std_srvs_dir(fallback: Path | None) -> tuple[Path | None, str]:
    """The Jazzy std_srvs of the venv (ros-jazzy-std-srvs wheel) if installed, else fallback."""
    installed = Path(sys.prefix) / 'share' / 'std_srvs'
    if (installed / 'srv').is_dir():
        return installed, f'std_srvs from {installed}'
    return fallback, f'std_srvs from {fallback} (no ros-jazzy-std-srvs wheel in this venv)'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('cases', type=Path)
    parser.add_argument('--std-srvs', type=Path, help='fallback std_srvs package directory')
    args = parser.parse_args()

    data = YAML(typ='safe').load(args.cases.read_text())
    store = get_typestore(Stores.ROS2_JAZZY)
    extra = {}
    for name, directory in data.get('packages', {}).items():
        extra.update(package_types(name, Path(directory)))
    srvs, note = std_srvs_dir(args.std_srvs)
    if srvs is not None:
        extra.update(package_types('std_srvs', srvs))
    store.register(extra)

    checker = Checker(store)
    for entry in data.get('definitions', []):
        checker.check_definition(entry['type'], entry['definition'])
    for i, case in enumerate(data.get('cases', [])):
        checker.check_case(i, case)

    peers = 'rosbags' + (' and mcap-ros2-support' if generate_dynamic else '')
    print(f'{note}; checked with {peers}')
    for error in checker.errors:
        print(f'MISMATCH {error}')
    print(f'{checker.checked - checker.failed} passed, {checker.failed} failed')
    return 0 if not checker.errors and checker.checked > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
