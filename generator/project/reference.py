"""The readout.yaml reference page (docs/config.md), rendered from the packaged JSON Schema.

`render_reference(load_config_schema())` is deterministic Markdown: an overview table, then one
section per key in the schema's own order, each giving the type, whether it is required, the
default, the allowed values and the description. A `$ref` to a shared definition (an output) is
rendered once, under the path `parent.<name>`, with the defaults each referrer sets. Nothing here
reads readout.yaml; `docs/generate_config_reference.py` writes the page and
tests/test_config_reference.py checks that the committed page equals a fresh render.
"""

from __future__ import annotations

import json
from typing import Any

from generator.core.dataclass import dataclass
from generator.project import CONFIG_SCHEMA_PATH

REGENERATE = "python docs/generate_config_reference.py"
_TYPE_NAMES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
               "object": "mapping", "array": "list"}


def load_config_schema() -> dict[str, Any]:
    """The JSON Schema of readout.yaml shipped with the package."""
    return json.loads(CONFIG_SCHEMA_PATH.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class _Key:
    path: str
    node: dict[str, Any]
    required: bool
    depth: int
    defaults_by_referrer: tuple[tuple[str, Any], ...] = ()   # (referrer, default) of a shared definition's key


def _scalar(value: Any) -> str:
    """A value as it is written in readout.yaml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_scalar(item)}" for key, item in value.items()) + "}"
    return str(value)


def _code(value: Any) -> str:
    text = _scalar(value)
    fence = "``" if "`" in text else "`"
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    if kind is None and "enum" in node:
        kinds = []
        for value in node["enum"]:
            name = "boolean" if isinstance(value, bool) else "integer" if isinstance(value, int) else \
                "number" if isinstance(value, float) else "null" if value is None else "string"
            if name not in kinds:
                kinds.append(name)
        return kinds
    if kind is None and "$ref" in node:
        return ["object"]
    return [kind] if isinstance(kind, str) else list(kind or [])


def _type_text(node: dict[str, Any]) -> str:
    names = []
    kinds = _types(node)
    for kind in kinds:
        if kind == "null":
            continue
        name = _TYPE_NAMES.get(kind, kind)
        if kind == "array" and isinstance(node.get("items"), dict):
            item_types = _types(node["items"])
            if item_types:
                name = "list of " + " or ".join(_TYPE_NAMES.get(item, item) + "s" for item in item_types)
        names.append(name)
    text = " or ".join(names) if names else "any"
    return text + ", or left empty" if "null" in kinds else text


def _allowed(node: dict[str, Any]) -> list[str]:
    rules: list[str] = []
    if "enum" in node:
        rules.append("one of " + ", ".join(_code(value) for value in node["enum"]))
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        rules.append(f"from {_code(low)} to {_code(high)}")
    elif low is not None:
        rules.append(f"at least {_code(low)}")
    elif high is not None:
        rules.append(f"at most {_code(high)}")
    pattern = node.get("pattern")
    if pattern == "\\S" or node.get("minLength") == 1:
        rules.append("not empty or blank" if pattern == "\\S" else "not empty")
    elif pattern is not None:
        rules.append(f"matches the regular expression {_code(pattern)}")
    if pattern is not None and pattern != "\\S" and node.get("minLength") == 1:
        rules.append("not empty")
    if "maxLength" in node:
        rules.append(f"at most {node['maxLength']} characters")
    if "not" in node and node["not"].get("pattern") == "\\u0000":
        rules.append("no NUL character")
    if "minItems" in node:
        rules.append(f"at least {node['minItems']} item{'s' if node['minItems'] != 1 else ''}")
    if node.get("uniqueItems"):
        rules.append("no item twice")
    if "minProperties" in node:
        rules.append(f"at least {node['minProperties']} key{'s' if node['minProperties'] != 1 else ''}")
    items = node.get("items")
    if isinstance(items, dict):
        if "enum" in items:
            rules.append("each one of " + ", ".join(_code(value) for value in items["enum"]))
        if items.get("pattern") == "\\S":
            rules.append("each not empty or blank")
        elif "pattern" in items:
            rules.append(f"each matches the regular expression {_code(items['pattern'])}")
    properties = node.get("properties") or {}
    if node.get("additionalProperties") is False and properties:
        rules.append("keys " + ", ".join(_code(name) for name in properties) + "; no other key")
    for option in node.get("oneOf") or ():
        if set(option) != {"required"}:
            break
    else:
        if node.get("oneOf"):
            rules.append("exactly one of " + ", ".join(_code(option["required"][0]) for option in node["oneOf"]))
    return rules


def _resolve(schema: dict[str, Any], reference: str) -> tuple[str, dict[str, Any]]:
    prefix = "#/$defs/"
    if not reference.startswith(prefix):
        raise ValueError(f"only local $defs references are rendered, not {reference!r}")
    name = reference[len(prefix):]
    return name, schema["$defs"][name]


def _walk(schema: dict[str, Any]) -> list[_Key]:
    keys: list[_Key] = []

    def visit(node: dict[str, Any], path: str, depth: int,
              referrers: dict[str, list[tuple[str, dict[str, Any]]]] | None = None) -> None:
        required = set(node.get("required") or ())
        shared: dict[str, tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]] = {}
        for name, child in (node.get("properties") or {}).items():
            child_path = f"{path}.{name}" if path else name
            defaults = ()
            if referrers:
                defaults = tuple((referrer, overrides[name]["default"]) for referrer, overrides in referrers[name]
                                 if "default" in overrides.get(name, {}))
            keys.append(_Key(child_path, child, name in required, depth, defaults))
            if "$ref" in child:
                definition_name, definition = _resolve(schema, child["$ref"])
                entry = shared.setdefault(definition_name, (definition, []))
                entry[1].append((name, child.get("properties") or {}))
                continue
            visit(child, child_path, depth + 1)
            items = child.get("items")
            if isinstance(items, dict) and items.get("properties"):
                keys.append(_Key(f"{child_path}[]", items, False, depth + 1, (("item of", child_path),)))
                visit(items, f"{child_path}[]", depth + 1)
        for definition_name, (definition, users) in shared.items():
            shared_path = f"{path}.<{definition_name}>" if path else f"<{definition_name}>"
            keys.append(_Key(shared_path, definition, False, depth,
                             (("used by", ", ".join(user for user, _ in users)),)))
            overrides: dict[str, list[tuple[str, dict[str, Any]]]] = {
                name: [(user, properties) for user, properties in users] for name in definition.get("properties", {})}
            visit(definition, shared_path, depth + 1, overrides)

    visit(schema, "", 0)
    return keys


def _default_text(key: _Key) -> str | None:
    if "default" in key.node:
        return _code(key.node["default"])
    if key.defaults_by_referrer and not _grouping(key):
        return ", ".join(f"{_code(value)} ({referrer})" for referrer, value in key.defaults_by_referrer)
    node = key.node
    if "$ref" in node and node.get("properties"):
        return ", ".join(f"{name} {_code(override['default'])}" for name, override in node["properties"].items()
                         if "default" in override)
    return None


def _section(key: _Key) -> list[str]:
    heading = "##" if key.depth == 0 else "###"
    lines = [f"{heading} `{key.path}`", ""]
    description = key.node.get("description")
    if description:
        lines += [description, ""]
    facts = [f"- Type: {_type_text(key.node)}"]
    if "$ref" in key.node:
        facts[0] += f" (the keys of `{key.path.rsplit('.', 1)[0]}.<{key.node['$ref'].rsplit('/', 1)[-1]}>`)"
    if key.defaults_by_referrer and key.defaults_by_referrer[0][0] == "used by":
        facts.append(f"- Used by: {', '.join(_code(name) for name in key.defaults_by_referrer[0][1].split(', '))}")
    if key.defaults_by_referrer and key.defaults_by_referrer[0][0] == "item of":
        facts.append(f"- Each item of: `{key.defaults_by_referrer[0][1]}`")
    if not _grouping(key):
        facts.append(f"- Required: {'yes' if key.required else 'no'}")
    default = _default_text(key)
    if default is not None:
        facts.append(f"- Default: {default}")
    rules = _allowed(key.node)
    if rules:
        facts.append(f"- Allowed: {'; '.join(rules)}")
    return lines + facts + [""]


def _grouping(key: _Key) -> bool:
    """A shared definition or a list item: a shape, not a key one writes."""
    return bool(key.defaults_by_referrer) and key.defaults_by_referrer[0][0] in ("used by", "item of")


def render_reference(schema: dict[str, Any]) -> str:
    """docs/config.md: the reference page of readout.yaml, from its JSON Schema."""
    keys = _walk(schema)
    lines = [
        f"<!-- Generated from generator/project/config.schema.json by `{REGENERATE}`: edit the schema,",
        "     then regenerate; tests/test_config_reference.py fails when this page is stale. -->",
        "",
        "# readout.yaml reference",
        "",
        schema.get("description", ""),
        "",
        "The schema ships with the package (`generator/project/config.schema.json`, JSON Schema draft",
        "2020-12), so an editor can validate readout.yaml as you type. `readout init` writes a",
        "commented readout.yaml to start from.",
        "",
        "| Key | Type | Required | Default |",
        "| --- | --- | --- | --- |",
    ]
    for key in keys:
        default = _default_text(key) or ""
        required = "" if _grouping(key) else "yes" if key.required else "no"
        lines.append(f"| `{key.path}` | {_type_text(key.node)} | {required} | "
                     f"{default.replace('|', '&#124;')} |")
    lines.append("")
    for key in keys:
        lines += _section(key)
    return "\n".join(lines).rstrip("\n") + "\n"
