"""Type store shared by bag_write.py and bag_check.py: rosbags' ROS 2 Jazzy types plus the
suite's own interfaces parsed from msg/msg/*.msg (no sockets in here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent.parent
MSG_PACKAGE = "rpq_interfaces"


def reference_typestore() -> Any:
    """rosbags' Jazzy type store with rpq_interfaces/msg/* registered from msg/msg/*.msg."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    custom: dict[str, Any] = {}
    msg_dir = REPO / "msg" / "msg"
    for f in sorted(msg_dir.glob("*.msg")):
        custom.update(get_types_from_msg(f.read_text(encoding="utf-8"), f"{MSG_PACKAGE}/msg/{f.stem}"))
    store.register(custom)
    return store


def normalize_type(name: str) -> str:
    """'pkg/Type' -> 'pkg/msg/Type'; 'pkg/msg/Type' unchanged."""
    parts = name.strip("/").split("/")
    if len(parts) == 2:
        return f"{parts[0]}/msg/{parts[1]}"
    if len(parts) == 3:
        return "/".join(parts)
    raise ValueError(f"type {name!r} is not of the form pkg/msg/Type")


_NUMPY = {
    "bool": "bool", "byte": "uint8", "char": "uint8", "int8": "int8", "uint8": "uint8",
    "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32",
    "int64": "int64", "uint64": "uint64", "float32": "float32", "float64": "float64",
}
_MISSING = object()


def _scalar(base: str, value: Any, where: str) -> Any:
    if value is _MISSING:
        return "" if base in ("string", "wstring") else (False if base == "bool" else
                                                         (0.0 if base.startswith("float") else 0))
    if base in ("string", "wstring"):
        return str(value)
    if base == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true/false, got {value!r}")
        return value
    if base.startswith("float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: expected an integer ({base}), got {value!r}")
    return value


def _value(store: Any, node: Any, value: Any, where: str) -> Any:
    import numpy as np
    from rosbags.typesys.base import Nodetype

    kind, detail = node
    if kind == Nodetype.BASE:
        return _scalar(detail[0], value, where)
    if kind == Nodetype.NAME:
        return build_message(store, detail, None if value is _MISSING else value, where)
    sub, length = detail
    if kind == Nodetype.ARRAY:
        items = [_MISSING] * length if value is _MISSING else value
        if not isinstance(items, list) or len(items) != length:
            raise ValueError(f"{where}: expected a list of {length} values, got {value!r}")
    else:
        items = [] if value is _MISSING else value
        if not isinstance(items, list):
            raise ValueError(f"{where}: expected a list, got {value!r}")
    converted = [_value(store, sub, v, f"{where}[{i}]") for i, v in enumerate(items)]
    if sub[0] == Nodetype.BASE and sub[1][0] in _NUMPY:
        return np.array(converted, dtype=_NUMPY[sub[1][0]])
    return converted


def build_message(store: Any, msgtype: str, data: Any, where: str = "") -> Any:
    """A rosbags message object of `msgtype` from a mapping (parsed YAML). Missing fields are
    zero/empty (also where the .msg has a default, e.g. Quaternion.w); unknown ones are an error."""
    msgtype = normalize_type(msgtype)
    if msgtype not in store.fielddefs:
        raise ValueError(f"unknown message type {msgtype!r}")
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ValueError(f"{where or msgtype}: expected a mapping, got {data!r}")
    _, fields = store.fielddefs[msgtype]
    names = [n for n, _ in fields]
    unknown = [k for k in data if k not in names]
    if unknown:
        raise ValueError(f"{msgtype} has no field(s) {unknown} at {where or 'top level'} (fields: {names})")
    kwargs = {
        name: _value(store, node, data.get(name, _MISSING), f"{where}.{name}" if where else name)
        for name, node in fields
    }
    return store.types[msgtype](**kwargs)


def mcap_files(path: Path) -> list[Path]:
    """The .mcap files of a bag directory (from metadata.yaml if present) or the file itself."""
    if path.is_file():
        return [path]
    meta = path / "metadata.yaml"
    if meta.is_file():
        import yaml

        info = yaml.safe_load(meta.read_text(encoding="utf-8"))
        rel = info.get("rosbag2_bagfile_information", {}).get("relative_file_paths", [])
        files = [path / r for r in rel]
        if files:
            return files
    return sorted(path.glob("*.mcap"))
