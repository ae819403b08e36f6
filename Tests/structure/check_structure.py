#!/usr/bin/env python3
"""The code's shape, checked on every `make test` (issue 19's rules, so they cannot drift back):
- every module a Swift file imports is declared as a dependency of its target in Package.swift
  (SwiftPM lets a target import any module built before it, declared or not), and every declared
  dependency is imported somewhere in the target (so the manifest's arrows are the real ones);
- the target graph in docs/architecture.md (its mermaid block) has exactly the manifest's arrows;
- no Swift file is over 400 lines;
- no source folder holds more than 25 files directly;
- the page (Public/, vendored code aside): no folder over 25 files, no script or stylesheet over 300 lines.
Reads `swift package dump-package` (the manifest as SwiftPM understands it), so the target list is
never parsed by hand. Prints one line per breach and exits 1 if there is any."""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES = 400
MAX_FILES = 25
# Modules every target may import: the toolchain's own.
TOOLCHAIN = {"Foundation", "FoundationEssentials", "Dispatch", "Glibc", "Synchronization", "XCTest",
             "Testing", "PackageDescription", "os", "Darwin"}


def main() -> int:
    manifest = json.loads(subprocess.check_output(
        [os.environ.get("SWIFT", "swift"), "package", "dump-package"], cwd=ROOT, text=True))
    breaches = []
    for target in manifest["targets"]:
        name = target["name"]
        declared = {name}
        for dependency in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    declared.add(dependency[kind][0])
        if target["type"] == "system":
            continue
        folder = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", name)
        imported = set()
        for directory, _, files in os.walk(os.path.join(ROOT, folder)):
            swift = [f for f in files if f.endswith(".swift")]
            if len(files) > MAX_FILES and "Fixtures" not in directory:
                breaches.append(f"{os.path.relpath(directory, ROOT)}: {len(files)} files directly (at most {MAX_FILES})")
            for file in swift:
                path = os.path.join(directory, file)
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
                lines = text.count("\n")
                if lines > MAX_LINES:
                    breaches.append(f"{os.path.relpath(path, ROOT)}: {lines} lines (at most {MAX_LINES})")
                modules = re.findall(r"^(?:@testable\s+)?import\s+(?:(?:struct|enum|class|func)\s+)?(\w+)", text, re.M)
                imported.update(modules)
                for module in modules:
                    if module not in declared and module not in TOOLCHAIN:
                        breaches.append(f"{os.path.relpath(path, ROOT)}: imports {module}, which target {name} does not declare")
        for module in sorted(declared - imported - {name}):
            breaches.append(f"target {name} declares {module} but no file of it imports it")
    breaches += graph_breaches(manifest)
    breaches += page_breaches()
    for breach in breaches:
        print(f"structure: {breach}")
    print(f"structure: {'OK' if not breaches else f'{len(breaches)} breach(es)'}")
    return 1 if breaches else 0


MAX_PAGE_LINES = 300


def page_breaches() -> list:
    found = []
    public = os.path.join(ROOT, "Public")
    for directory, folders, files in os.walk(public):
        folders[:] = [f for f in folders if f != "vendor"]
        if len(files) > MAX_FILES:
            found.append(f"{os.path.relpath(directory, ROOT)}: {len(files)} files directly (at most {MAX_FILES})")
        for file in files:
            if file.endswith((".js", ".css")):
                path = os.path.join(directory, file)
                with open(path, encoding="utf-8") as handle:
                    lines = handle.read().count("\n")
                if lines > MAX_PAGE_LINES:
                    found.append(f"{os.path.relpath(path, ROOT)}: {lines} lines (at most {MAX_PAGE_LINES})")
    return found


def graph_breaches(manifest) -> list:
    """The arrows of the first ```mermaid block of docs/architecture.md against the manifest's, for
    every target but tests, test support and benches."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as handle:
        doc = handle.read()
    block = re.search(r"```mermaid\n(.*?)```", doc, re.S)
    if not block:
        return ["docs/architecture.md has no mermaid target graph"]
    drawn = set(re.findall(r"^\s*(\w[\w-]*)\s*-->\s*(\w[\w-]*)\s*$", block.group(1), re.M))
    real = set()
    for target in manifest["targets"]:
        if target["type"] == "test" or target["name"] in ("ParleyTestSupport", "parley-markdown-bench"):
            continue
        for dependency in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    real.add((target["name"], dependency[kind][0]))
    return ([f"docs/architecture.md draws {a} --> {b}, which Package.swift does not declare" for a, b in sorted(drawn - real)]
            + [f"docs/architecture.md lacks {a} --> {b} (Package.swift)" for a, b in sorted(real - drawn)])


if __name__ == "__main__":
    sys.exit(main())
