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

Plain scalars are resolved by the YAML 1.2 core schema, not by PyYAML's YAML 1.1 rules:

* integers: decimal ``[-+]?[0-9]+`` (``012`` is 12, not octal 10), octal ``0o[0-7]+`` and hex
  ``0x[0-9a-fA-F]+``. YAML 1.1's ``1_000``, sexagesimal ``1:04`` and binary ``0b101`` are strings, which
  an integer field refuses.
* floats: ``[-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?``, ``[-+]?.inf`` and ``.nan`` (each in
  lower, Capitalised or UPPER case), so ``lr: 1e-3`` is the float 0.001 (YAML 1.1 reads a string);
  ``1_0.5`` and ``1:30.5`` are strings.
* booleans: only ``true``/``True``/``TRUE`` and ``false``/``False``/``FALSE``; ``yes``, ``no``, ``on``
  and ``off`` are strings, which a boolean field refuses.

Null and timestamps resolve as in PyYAML. Limits, each refused with a ConfigError:

* every float parameter is finite: ``.inf``, ``.nan`` and ``1e400`` (which overflows to inf) are not;
* every integer parameter is within int64, ``[-2^63, 2^63 - 1]``, and ``seed`` within ``[0, 2^63 - 1]``
  (what ``jax.random.key`` takes with float64 on); sweep sizes such as ``n_seeds`` are further limited to
  ``2^31 - 1`` by :mod:`sims.runtime` (int32 seed indices);
* a list parameter (a sweep) is non-empty;
* the file is UTF-8 text, and its document has at most :data:`MAX_NODES` (10000) nodes once aliases are
  expanded, so an alias bomb ("billion laughs") is refused before it is built;
* a value quoted in an error message is cut to at most :data:`MAX_QUOTE` (80) characters;
* the file is at most :data:`MAX_BYTES` (64 KiB), and an integer literal has at most :data:`MAX_DIGITS`
  (100) digits (a longer one stands for itself unconverted, and every integer field refuses it), so
  loading any config takes well under a second (Python's ``int()`` of a million digits takes minutes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import reprlib
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SCALES = ("quick", "paper")
TOP_KEYS = {"sim", "experiment", "seed", "params", "quick", "paper"}
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
SEED_MAX = 2**63 - 1  # jax.random.key(seed) takes an int64 with x64 on (OverflowError from 2^63)
MAX_NODES = 10_000  # YAML nodes of a document once aliases are expanded
MAX_QUOTE = 80  # characters of a value quoted in an error message
MAX_BYTES = 64 * 1024  # bytes of a config file (the paper configs are under 3 KB)
MAX_DIGITS = 100  # digits of an integer literal that are converted (int64 needs 19)

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 8, 8, 4
_REPR.maxstring = _REPR.maxlong = _REPR.maxother = MAX_QUOTE


def _one_line(text: str, limit: int | None = MAX_QUOTE) -> str:
    """``text`` with non-printable characters (newlines) escaped, cut to ``limit`` characters."""
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    if limit is not None and len(text) > limit:
        text = text[:limit - 3] + "..."
    return text


def _quote(value: Any) -> str:
    """``repr(value)`` on one line and at most MAX_QUOTE characters, without building the whole repr."""
    try:
        text = _REPR.repr(value)
    except ValueError:  # an int past Python's 4300-digit str conversion limit
        text = f"<{type(value).__name__} too large to show>"
    return _one_line(text)


class ConfigError(Exception):
    """A config that does not match its schema. ``str(err)`` is the one-line message."""

    def __init__(self, path: str | Path, key: str, expected: str, got: Any = dataclasses.MISSING):
        key, expected = _one_line(str(key)), _one_line(expected, None)
        self.path, self.key, self.expected = str(path), key, expected
        msg = f"{path}: key '{key}': expected {expected}"
        if got is not dataclasses.MISSING:
            msg += f", got {_quote(got)}"
        super().__init__(msg)


class _Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's ints, floats and booleans (see the module docstring)
    and duplicate-key detection."""


_INT_TAG, _FLOAT_TAG, _BOOL_TAG = (f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool"))
_INT_RE = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT_RE = re.compile(r"""^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
                          |[-+]?\.(?:inf|Inf|INF)
                          |\.(?:nan|NaN|NAN))$""", re.VERBOSE)
_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")

# add_implicit_resolver appends to the YAML 1.1 resolvers inherited from SafeLoader, which would still
# match first: start from a copy without PyYAML's int, float and bool rules, then add the YAML 1.2 ones
# (int before float, as "12" matches both).
_Loader.yaml_implicit_resolvers = {
    first: kept for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    if (kept := [(tag, rx) for tag, rx in resolvers if tag not in (_INT_TAG, _FLOAT_TAG, _BOOL_TAG)])}
_Loader.add_implicit_resolver(_BOOL_TAG, _BOOL_RE, list("tTfF"))
_Loader.add_implicit_resolver(_INT_TAG, _INT_RE, list("-+0123456789"))
_Loader.add_implicit_resolver(_FLOAT_TAG, _FLOAT_RE, list("-+0123456789."))


def _scalar(loader, node, rx, what) -> str:
    text = loader.construct_scalar(node)
    if not rx.match(text):  # reachable with an explicit tag, e.g. ``!!int 1_000``
        raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not a YAML 1.2 {what}",
                                                node.start_mark)
    return text


def _construct_int(loader, node) -> int:
    text = _scalar(loader, node, _INT_RE, "integer")
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    if len(text.lstrip("+-").lstrip("0")) > MAX_DIGITS:  # int() of it could take minutes; no field takes it
        return _LongInt(text)
    return int(text)


class _LongInt(int):
    """An integer literal of more than :data:`MAX_DIGITS` digits, not converted: as an int it stands for
    itself as ``±10**MAX_DIGITS`` (outside the int64 range every integer field checks), as a float it is
    the literal's float (linear time; ``inf`` past 1e308), and it is quoted by its sign and digit count."""

    def __new__(cls, text: str):
        sign = -1 if text.startswith("-") else 1
        self = super().__new__(cls, sign * 10**MAX_DIGITS)
        self.literal = text
        self.quoted = f"{'-' if sign < 0 else ''}<an integer of {len(text.lstrip('+-').lstrip('0'))} digits>"
        return self

    def __float__(self) -> float:
        return float(self.literal)

    def __repr__(self) -> str:
        return self.quoted


def _construct_float(loader, node) -> float:
    text = _scalar(loader, node, _FLOAT_RE, "float")
    low = text.lower()
    if low.endswith(".inf"):
        return -math.inf if text[0] == "-" else math.inf
    return math.nan if low == ".nan" else float(text)


def _construct_bool(loader, node) -> bool:
    return _scalar(loader, node, _BOOL_RE, "boolean").lower() == "true"


_Loader.add_constructor(_INT_TAG, _construct_int)
_Loader.add_constructor(_FLOAT_TAG, _construct_float)
_Loader.add_constructor(_BOOL_TAG, _construct_bool)


def _no_duplicates(loader, node, deep=False):
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise yaml.constructor.ConstructorError(None, None, f"duplicate key {sorted(dup)[0]!r}",
                                                node.start_mark)
    return loader.construct_mapping(node, deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def param(default: Any = dataclasses.MISSING, *, ge=None, gt=None, le=None, lt=None, doc: str = "",
          smoke: int | None = None):
    """A dataclass field with bounds checked by :func:`build` (applied to every element of a tuple).

    ``smoke``: the truncation a smoke run (:func:`smoke_params`) applies to this field, for a loop count or a
    sweep: an int field becomes ``min(value, smoke)``, a tuple field its first ``smoke`` entries."""
    meta = {"ge": ge, "gt": gt, "le": le, "lt": lt, "doc": doc, "smoke": smoke}
    return dataclasses.field(default=default, metadata=meta)


SMOKE_SEEDS = 2  # a smoke run's seeds, for every field named n_seeds without its own ``smoke``


def smoke_params(params: Any) -> Any:
    """``params`` with its loops truncated for a smoke run (``python -m sims plan --smoke``): each field
    declared with ``param(..., smoke=k)`` cut to ``k`` (an int to ``min(value, k)``, a tuple to its first
    ``k`` entries) and ``n_seeds`` to at most :data:`SMOKE_SEEDS`. Cross-field checks run again.

    Raises:
      ValueError: the truncated parameters fail the dataclass's own checks (mark the fields that go
        together with the same ``smoke``).
    """
    changes = {}
    for f in dataclasses.fields(params):
        k = f.metadata.get("smoke")
        if k is None and f.name == "n_seeds":
            k = SMOKE_SEEDS
        v = getattr(params, f.name)
        if k is None or isinstance(v, bool):
            continue
        if isinstance(v, tuple):
            changes[f.name] = v[:k]
        elif isinstance(v, int):
            changes[f.name] = min(v, k)
    return dataclasses.replace(params, **changes)


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
        return f"a non-empty list of {inner}"
    return {int: "an integer", float: "a finite number", bool: "true or false", str: "a string"}.get(
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
        if not isinstance(value, list) or not value:
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
        if not INT64_MIN <= value <= INT64_MAX:
            raise ConfigError(path, key, f"{want}, within the int64 range [-2^63, 2^63 - 1]", value)
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(path, key, want, value)
        try:
            value = float(value)
        except OverflowError:  # an int past the float range
            raise ConfigError(path, key, want, value) from None
        if not math.isfinite(value):  # .inf, .nan, 1e400
            raise ConfigError(path, key, want, value)
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
        # a check whose message names one parameter ("hinge_eps must be ...") is reported under that key
        named = {w for w in re.findall(r"\w+", str(e)) if w in fields}
        name = named.pop() if len(named) == 1 else None
        raise ConfigError(path, f"{origins.get(name, prefix)}.{name}" if name else prefix, str(e)) from None
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


def _expanded_size_exceeds(node: yaml.Node, limit: int) -> bool:
    """Whether the composed document ``node`` has more than ``limit`` nodes with aliases followed (an alias
    is the node it names, so shared and recursive nodes count once per reference). Stops at ``limit``."""
    count, stack = 0, [node]
    while stack:
        n = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            stack.extend(x for pair in n.value for x in pair)
    return False


def _character(ch) -> str:
    """``'U+0000'`` for a character (or its code point) the YAML reader refused."""
    code = ord(ch) if isinstance(ch, str) and len(ch) == 1 else ch
    return f"the character U+{code:04X}" if isinstance(code, int) else "a character it cannot read"


def read_yaml(path: str | Path) -> dict:
    """Parse a YAML file with the strict loader; any problem is a ConfigError.

    The document is composed first and refused if it has more than :data:`MAX_NODES` nodes once aliases
    are expanded, so that no alias bomb is ever built into Python objects (or quoted in an error)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(path, "-", "an existing YAML file", "no such file")
    try:
        if p.stat().st_size > MAX_BYTES:
            raise ConfigError(path, "-", f"a config of at most {MAX_BYTES // 1024} KiB",
                              f"{p.stat().st_size} bytes")
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(path, "-", "a UTF-8 text file",
                          f"byte {e.object[e.start]:#04x} at offset {e.start}") from None
    except OSError as e:
        raise ConfigError(path, "-", "a readable file", e.strerror or str(e)) from None
    try:
        loader = _Loader(text)  # the reader refuses control characters (a NUL byte) here
    except yaml.YAMLError as e:
        raise ConfigError(path, f"offset {getattr(e, 'position', '?')}", "valid YAML (printable characters)",
                          _character(getattr(e, "character", None))) from None
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size_exceeds(node, MAX_NODES):
            raise ConfigError(path, "-", f"at most {MAX_NODES} YAML nodes with aliases expanded "
                              "(an alias bomb?)", f"more than {MAX_NODES}")
        data = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "-"
        raise ConfigError(path, where, "valid YAML", getattr(e, "problem", str(e))) from None
    except RecursionError:
        raise ConfigError(path, "-", "YAML nested less deeply", "too deep to parse") from None
    finally:
        loader.dispose()
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
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ConfigError(path, "seed", "an integer in [0, 2^63 - 1] (a jax.random.key seed)", seed)
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
