"""docs/openapi.json is what generate.py writes (edit the generator, not the file), and a valid
OpenAPI 3.1 document whose every $ref resolves."""
import json

import jsonschema
import pytest

import generate
from conftest import DOCUMENT, ROOT


def test_docs_file_is_the_generators_output():
    assert (ROOT / "docs" / "openapi.json").read_text(encoding="utf-8") == generate.document_text(), \
        "docs/openapi.json differs from Tests/openapi/generate.py's output: run it"


def refs(value):
    if isinstance(value, dict):
        if "$ref" in value:
            yield value["$ref"]
        for item in value.values():
            yield from refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from refs(item)


def test_every_ref_resolves_and_every_schema_is_valid_json_schema():
    schemas = DOCUMENT["components"]["schemas"]
    for target in set(refs(DOCUMENT)):
        assert target.startswith("#/components/schemas/") and target.rsplit("/", 1)[1] in schemas, target
    for name, schema in schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", sorted(DOCUMENT["paths"]))
def test_every_operation_documents_success_and_errors(path):
    for method, operation in DOCUMENT["paths"][path].items():
        statuses = set(operation["responses"])
        assert "default" in statuses and any(s.startswith("2") for s in statuses), (method, path)
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path":
                assert "{" + parameter["name"] + "}" in path
