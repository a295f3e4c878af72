#!/usr/bin/env python3
"""Checks Pushline's machine-readable contract: records against the JSON Schemas in docs/schemas,
and docs/asyncapi.yaml against those schemas.

    validate_records.py [--schemas DIR] [--valid SCHEMA FILE]... [--invalid SCHEMA FILE]...
                        [--asyncapi FILE]

  --valid SCHEMA FILE     every line of FILE (JSON Lines) must validate against SCHEMA
                          (a file name in the schemas directory, e.g. delivery.schema.json)
  --invalid SCHEMA FILE   every line of FILE must fail: not UTF-8, not JSON, or not valid
  --asyncapi FILE         FILE parses as YAML, is AsyncAPI 3.0.0, every $ref resolves (into the
                          document or into a schema file), every schema file is some message's
                          payload, and each operation's messages belong to its channel

Every schema in the directory is first checked against the draft 2020-12 meta-schema. Each
mismatch is printed as "FILE:LINE: ..."; the exit code is 1 when there was any, 2 on bad usage.
Lines are bytes: an empty line is skipped, anything else is one record. Run it with the project's
.venv/bin/python (scripts/setup installs jsonschema and PyYAML there).
"""

import argparse
import json
import pathlib
import sys
import urllib.parse

import jsonschema
import referencing
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Checker:
    def __init__(self, schemas_dir):
        self.schemas_dir = pathlib.Path(schemas_dir)
        self.failures = 0
        self.schemas = {}
        for path in sorted(self.schemas_dir.glob("*.schema.json")):
            try:
                self.schemas[path.name] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                self.fail(f"{path}: not a JSON file: {error}")
        # The schemas refer to each other by file name (relative references, no $id): register
        # each under its name, which is what a relative reference from a schema without $id
        # resolves to.
        self.registry = referencing.Registry().with_resources(
            (name, referencing.Resource.from_contents(schema, default_specification=referencing.jsonschema.DRAFT202012))
            for name, schema in self.schemas.items()
        )
        for name, schema in self.schemas.items():
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.SchemaError as error:
                self.fail(f"{self.schemas_dir / name}: not a valid draft 2020-12 schema: {error.message}")

    def fail(self, message):
        self.failures += 1
        print(message)

    def validator(self, name):
        if name not in self.schemas:
            self.fail(f"no schema {name} in {self.schemas_dir}")
            return None
        return jsonschema.Draft202012Validator(self.schemas[name], registry=self.registry)

    @staticmethod
    def parse(line):
        """The record as JSON, or (None, why) when a JSON consumer would refuse it outright."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            return None, f"not UTF-8 ({error.reason} at byte {error.start})"

        def refuse_constant(name):
            raise ValueError(f"{name} is not JSON")

        try:
            return json.loads(text, parse_constant=refuse_constant), None
        except (ValueError, RecursionError) as error:
            return None, f"not JSON ({error})"

    def records(self, schema, file, expect_valid):
        validator = self.validator(schema)
        if validator is None:
            return
        count = 0
        for number, line in enumerate(pathlib.Path(file).read_bytes().split(b"\n"), start=1):
            if not line.strip():
                continue
            count += 1
            value, unparsable = self.parse(line)
            if unparsable is not None:
                if expect_valid:
                    self.fail(f"{file}:{number}: {unparsable}: {snippet(line)}")
                continue
            errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
            if expect_valid and errors:
                for error in errors:
                    where = "/".join(str(p) for p in error.absolute_path) or "(record)"
                    message = error.message if len(error.message) <= 300 else error.message[:300] + "..."
                    self.fail(f"{file}:{number}: {schema}: {where}: {message}")
            elif not expect_valid and not errors:
                self.fail(f"{file}:{number}: {schema}: valid, but expected to be invalid: {snippet(line)}")
        if count == 0:
            self.fail(f"{file}: no records")
        print(f"{file}: {count} records, each {'valid' if expect_valid else 'invalid'} against {schema}"
              if self.failures == 0 else f"{file}: {count} records checked against {schema}")

    def asyncapi(self, file):
        path = pathlib.Path(file)
        try:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            self.fail(f"{file}: not YAML: {error}")
            return
        if not isinstance(document, dict) or document.get("asyncapi") != "3.0.0":
            self.fail(f"{file}: `asyncapi: 3.0.0` missing")
            return
        for key in ("title", "version"):
            if not (document.get("info") or {}).get(key):
                self.fail(f"{file}: info.{key} missing")

        used_schemas = set()

        def resolve(ref, where):
            """The value a $ref points at, or None after reporting why it does not resolve."""
            target, _, fragment = ref.partition("#")
            if target:
                if urllib.parse.urlparse(target).scheme:
                    self.fail(f"{file}: {where}: $ref {ref!r} is not a relative file reference")
                    return None
                referenced = (path.parent / target).resolve()
                if referenced.parent == self.schemas_dir.resolve():
                    used_schemas.add(referenced.name)
                try:
                    base = json.loads(referenced.read_text(encoding="utf-8"))
                except (OSError, ValueError) as error:
                    self.fail(f"{file}: {where}: $ref {ref!r} does not resolve: {error}")
                    return None
            else:
                base = document
            value = base
            for token in [t for t in fragment.split("/") if t] if fragment else []:
                token = token.replace("~1", "/").replace("~0", "~")
                if isinstance(value, dict) and token in value:
                    value = value[token]
                elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
                    value = value[int(token)]
                else:
                    self.fail(f"{file}: {where}: $ref {ref!r} does not resolve (no {token!r})")
                    return None
            return value

        def walk(node, where):
            if isinstance(node, dict):
                if "$ref" in node:
                    resolve(node["$ref"], where)
                for key, value in node.items():
                    walk(value, f"{where}/{key}")
            elif isinstance(node, list):
                for index, value in enumerate(node):
                    walk(value, f"{where}/{index}")

        walk(document, "#")

        channels = document.get("channels") or {}
        if not channels:
            self.fail(f"{file}: no channels")
        for name, channel in channels.items():
            if "kafka." not in (channel.get("description") or ""):
                self.fail(f"{file}: channels/{name}: the description names no configuration key (kafka.*)")
            if not channel.get("messages"):
                self.fail(f"{file}: channels/{name}: no messages")
        for name, operation in (document.get("operations") or {}).items():
            if operation.get("action") not in ("send", "receive"):
                self.fail(f"{file}: operations/{name}: action must be send or receive")
            channel = (operation.get("channel") or {}).get("$ref", "")
            if not channel.startswith("#/channels/"):
                self.fail(f"{file}: operations/{name}: channel is not a reference to #/channels/...")
            for message in operation.get("messages") or []:
                if not message.get("$ref", "").startswith(channel + "/messages/"):
                    self.fail(f"{file}: operations/{name}: message {message.get('$ref')!r} is not one of {channel}'s")

        # Inline schemas (headers, the dead-letter payload, binding keys) must be schemas too.
        for name, message in ((document.get("components") or {}).get("messages") or {}).items():
            for part in ("headers", "payload"):
                schema = message.get(part)
                if isinstance(schema, dict) and "schema" not in schema and "$ref" not in schema:
                    try:
                        jsonschema.Draft7Validator.check_schema(schema)
                    except jsonschema.SchemaError as error:
                        self.fail(f"{file}: components/messages/{name}/{part}: not a schema: {error.message}")

        # Every schema file is some message's payload, except result.schema.json, the union of the
        # results channel's records, which must name exactly those records.
        for name in sorted(set(self.schemas) - used_schemas - {"result.schema.json"}):
            self.fail(f"{file}: docs/schemas/{name} is no message's payload")
        union = self.schemas.get("result.schema.json")
        if union is not None:
            in_union = {item.get("$ref") for item in union.get("oneOf", [])}
            on_results = set()
            for message in ((channels.get("results") or {}).get("messages") or {}).values():
                resolved = resolve(message.get("$ref", ""), "channels/results") if "$ref" in message else message
                ref = (((resolved or {}).get("payload") or {}).get("schema") or {}).get("$ref", "")
                on_results.add(pathlib.PurePosixPath(ref).name)
            if in_union != on_results:
                self.fail(f"{file}: the results channel carries {sorted(on_results)}, result.schema.json names {sorted(in_union)}")
        print(f"{file}: AsyncAPI {document['asyncapi']}, {len(channels)} channels, references resolve"
              if self.failures == 0 else f"{file}: checked")


def snippet(line):
    text = line[:100].decode("utf-8", errors="replace")
    return text + ("..." if len(line) > 100 else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", default=str(ROOT / "docs" / "schemas"), help="the schema directory")
    parser.add_argument("--valid", nargs=2, action="append", default=[], metavar=("SCHEMA", "FILE"))
    parser.add_argument("--invalid", nargs=2, action="append", default=[], metavar=("SCHEMA", "FILE"))
    parser.add_argument("--asyncapi", metavar="FILE")
    arguments = parser.parse_args()
    if not (arguments.valid or arguments.invalid or arguments.asyncapi):
        parser.error("nothing to check: give --valid, --invalid or --asyncapi")

    checker = Checker(arguments.schemas)
    for schema, file in arguments.valid:
        checker.records(schema, file, expect_valid=True)
    for schema, file in arguments.invalid:
        checker.records(schema, file, expect_valid=False)
    if arguments.asyncapi:
        checker.asyncapi(arguments.asyncapi)
    if checker.failures:
        print(f"{checker.failures} mismatch(es)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
