"""Writes openai_chat_schema.json: OpenAI's own JSON Schemas of a chat completion
(`CreateChatCompletionResponse`) and of a streamed chunk (`CreateChatCompletionStreamResponse`), with
every schema they reference, cut out of OpenAI's OpenAPI document (github.com/openai/openai-openapi,
openapi.json). OpenAPI's `nullable: true` becomes a JSON-Schema type union with "null" (and `null` in
an `enum`), and `$ref`s point into `$defs`, so `jsonschema` (draft 2020-12) reads the file as is.

    python3 Tests/openai/extract_schema.py path/to/openapi.json COMMIT > Tests/openai/openai_chat_schema.json
"""
import json
import sys

ROOTS = ["CreateChatCompletionResponse", "CreateChatCompletionStreamResponse"]
PREFIX = "#/components/schemas/"


def convert(node, found):
    """The node with `nullable` turned into type unions and refs into `$defs`; referenced names go to `found`."""
    if isinstance(node, list):
        return [convert(item, found) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and value.startswith(PREFIX):
            name = value[len(PREFIX):]
            found.add(name)
            out[key] = "#/$defs/" + name
        elif key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {name: convert(schema, found) for name, schema in value.items()}
        elif key in ("nullable", "deprecated", "x-stainless-const", "x-oaiMeta", "x-oaiTypeLabel", "example",
                     "description"):
            continue
        else:
            out[key] = convert(value, found)
    if node.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = kind + ["null"]
        elif kind is None:
            out = {"anyOf": [out, {"type": "null"}]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = out["enum"] + [None]
    return out


def main():
    source, commit = sys.argv[1], sys.argv[2]
    with open(source) as handle:
        schemas = json.load(handle)["components"]["schemas"]
    defs, pending = {}, list(ROOTS)
    while pending:
        name = pending.pop()
        if name in defs:
            continue
        found = set()
        defs[name] = convert(schemas[name], found)
        pending.extend(sorted(found - set(defs)))
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"Cut out of github.com/openai/openai-openapi openapi.json at commit {commit} by "
                    "Tests/openai/extract_schema.py (nullable turned into type unions). Do not edit by hand.",
        "$defs": dict(sorted(defs.items())),
    }
    json.dump(document, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
