"""Strict loading of ``paper_configs/*.yaml`` into frozen dataclasses.

A config file has these top-level keys (no others)::

    sim: seesaw            # the module sims.<sim> that runs it
    experiment: lm         # which experiment of that module
    seed: 0                # root seed of every sweep
    params: {...}          # values shared by both scales (optional)
    quick: {...}           # overrides for the quick scale (minutes on 2 CPU cores)
    paper: {...}           # overrides for the paper scale (GPU/TPU)

The merged ``params`` + ``<scale>`` mapping must match the experiment's parameter dataclass exactly: an
unknown key, a missing key, a wrong type or an out-of-range value raises :class:`ConfigError`, which the
command line prints as one line naming the file, the key and what was expected (exit status 2).

YAML 1.1 (PyYAML) reads ``1e-3`` as a string; this loader resolves floats by the YAML 1.2 rule, so
``lr: 1e-3`` is the float 0.001.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SCALES = ("quick", "paper")
TOP_KEYS = {"sim", "experiment", "seed", "params", "quick", "paper"}


class ConfigError(Exception):
    """A config that does not match its schema. ``str(err)`` is the one-line message."""

    def __init__(self, path: str | Path, key: str, expected: str, got: Any = dataclasses.MISSING):
        self.path, self.key, self.expected = str(path), key, expected
        msg = f"{path}: key '{key}': expected {expected}"
        if got is not dataclasses.MISSING:
            msg += f", got {got!r}"
        super().__init__(msg)


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 floats (``1e-3``, ``5E-6``, ``1.5e3``) and duplicate-key detection."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                  |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                  |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                  |[-+]?\.(?:inf|Inf|INF)
                  |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def _no_duplicates(loader, node, deep=False):
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise yaml.constructor.ConstructorError(None, None, f"duplicate key {sorted(dup)[0]!r}",
                                                node.start_mark)
    return loader.construct_mapping(node, deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def param(default: Any = dataclasses.MISSING, *, ge=None, gt=None, le=None, lt=None, doc: str = ""):
    """A dataclass field with bounds checked by :func:`build` (applied to every element of a tuple)."""
    meta = {"ge": ge, "gt": gt, "le": le, "lt": lt, "doc": doc}
    return dataclasses.field(default=default, metadata=meta)


def _bounds_text(meta) -> str:
    parts = [f"{op} {meta[k]}" for k, op in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))
             if meta.get(k) is not None]
    return " and ".join(parts)


def _check_bounds(v, meta) -> bool:
    return ((meta.get("ge") is None or v >= meta["ge"]) and (meta.get("gt") is None or v > meta["gt"])
            and (meta.get("le") is None or v <= meta["le"]) and (meta.get("lt") is None or v < meta["lt"]))


def _type_name(tp) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin is tuple:
        args = typing.get_args(tp)
        inner = _type_name(args[0]) if args else "value"
        return f"a list of {inner}"
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(
        tp, getattr(tp, "__name__", str(tp)))


def _coerce(value, tp, meta, path, key):
    """Convert one YAML value to field type ``tp`` or raise ConfigError."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _coerce(value, args[0], meta, path, key)
    if origin is typing.Literal:
        if value not in typing.get_args(tp):
            raise ConfigError(path, key, _type_name(tp), value)
        return value
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(path, key, _type_name(tp), value)
        elem = args[0]
        return tuple(_coerce(v, elem, meta, path, f"{key}[{i}]") for i, v in enumerate(value))
    bounds = _bounds_text(meta)
    want = _type_name(tp) + (f" {bounds}" if bounds else "")
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(path, key, want, value)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(path, key, want, value)
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(path, key, want, value)
        value = float(value)
    elif tp is str:
        if not isinstance(value, str):
            raise ConfigError(path, key, want, value)
    if not _check_bounds(value, meta):
        raise ConfigError(path, key, want, value)
    return value


def build(schema: type, mapping: dict, path: str | Path, prefix: str = "params",
          origins: dict[str, str] | None = None):
    """Build the frozen dataclass ``schema`` from ``mapping``, strictly (see module docstring).

    ``origins`` maps a key to the section it was written in, so that errors name ``<section>.<key>``."""
    origins = origins or {}
    if not isinstance(mapping, dict):
        raise ConfigError(path, prefix, "a mapping of parameters", mapping)
    hints = typing.get_type_hints(schema)
    fields = {f.name: f for f in dataclasses.fields(schema)}
    for k in mapping:
        if k not in fields:
            raise ConfigError(path, f"{origins.get(k, prefix)}.{k}",
                              "no such key (known: " + ", ".join(fields) + ")")
    values = {}
    for name, f in fields.items():
        if name not in mapping:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(path, f"{prefix}.{name}", f"a value ({_type_name(hints[name])})",
                                  "nothing")
            continue
        values[name] = _coerce(mapping[name], hints[name], f.metadata, path,
                               f"{origins.get(name, prefix)}.{name}")
    try:
        obj = schema(**values)
    except (ValueError, TypeError) as e:  # cross-field checks in __post_init__
        raise ConfigError(path, prefix, str(e)) from None
    return obj


@dataclass(frozen=True)
class RunConfig:
    """A loaded config: where it came from, which experiment, which scale, and its parameters."""

    path: str
    name: str
    sim: str
    experiment: str
    scale: str
    seed: int
    params: Any

    def params_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self.params)

    def hash(self) -> str:
        """SHA-256 of the canonical JSON of (sim, experiment, scale, seed, params)."""
        blob = json.dumps({"sim": self.sim, "experiment": self.experiment, "scale": self.scale,
                           "seed": self.seed, "params": self.params_dict()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


def read_yaml(path: str | Path) -> dict:
    """Parse a YAML file with the strict loader; any problem is a ConfigError."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(path, "-", "an existing YAML file", "no such file")
    try:
        data = yaml.load(p.read_text(), Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "-"
        raise ConfigError(path, where, "valid YAML", getattr(e, "problem", str(e))) from None
    if not isinstance(data, dict):
        raise ConfigError(path, "-", "a mapping at the top level", type(data).__name__)
    return data


def load(path: str | Path, scale: str, schemas: dict[str, type], sim: str | None = None,
         complete: bool = True) -> RunConfig:
    """Load ``path`` at ``scale`` against ``schemas`` (experiment name -> parameter dataclass).

    With ``complete`` (the default) every parameter must be written in the file (``params`` or the
    scale's section): a config states its whole run, and a forgotten key is an error, never a silent
    default. ``complete=False`` lets the dataclass defaults fill in (for programmatic use).

    Raises:
      ConfigError: unknown/missing keys, wrong types, out-of-range values, an unknown scale or
        experiment, or a config written for another sim than ``sim``.
    """
    data = read_yaml(path)
    for k in data:
        if k not in TOP_KEYS:
            raise ConfigError(path, str(k), "one of the top-level keys " + ", ".join(sorted(TOP_KEYS)))
    if scale not in SCALES:
        raise ConfigError(path, "scale", "one of " + ", ".join(SCALES), scale)
    for k in ("sim", "experiment"):
        if not isinstance(data.get(k), str):
            raise ConfigError(path, k, "a string", data.get(k, "nothing"))
    if sim is not None and data["sim"] != sim:
        raise ConfigError(path, "sim", f"'{sim}' (this is sims.{sim})", data["sim"])
    if data["experiment"] not in schemas:
        raise ConfigError(path, "experiment", "one of " + ", ".join(sorted(schemas)), data["experiment"])
    seed = _coerce(data.get("seed", 0), int, {"ge": 0}, path, "seed")
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for section in ("params", scale):
        sec = data.get(section) or {}
        if not isinstance(sec, dict):
            raise ConfigError(path, section, "a mapping of parameters", sec)
        merged.update(sec)
        origins.update({k: section for k in sec})
    params = build(schemas[data["experiment"]], merged, path, prefix=scale, origins=origins)
    if complete:
        for f in dataclasses.fields(schemas[data["experiment"]]):
            if f.name not in merged:
                raise ConfigError(path, f"{scale}.{f.name}",
                                  f"a value, in 'params' or '{scale}' (every parameter is written out)",
                                  "nothing")
    return RunConfig(str(path), Path(path).stem, data["sim"], data["experiment"], scale, seed, params)
