#!/usr/bin/env python3
"""Every repository path and source file name that a Markdown document names in backticks exists.

A backtick span is taken for a path when it has no spaces and either starts with a top-level
folder of the repository (`host/src/train/trainer.cpp`, `examples/pipelines/`) or with `../`, or
names a C++ or CMake source (`schema.hpp`, `data/triplets.hpp`, `check_plugin_readmes.cmake`). The
first must exist as written, relative to the repository or to the document's folder (a plugin
README's `tests/test_margin.cpp`); the second must be inside the repository; the third must be the
end of some file's path in the repository. Files of other kinds named alone are mostly not ours
(a data set's `list_attr_celeba.txt`, the authors' `main.py`, the `resolved.toml` a run holds) and
are left alone.

Usage: check_doc_paths.py SOURCE_DIR
"""
import os
import re
import sys

SOURCE_KINDS = (".cpp", ".hpp", ".h", ".cmake")
SKIPPED_FOLDERS = {".git", "runs", ".cache"}
SPAN = re.compile(r"`([^`\s]+)`")
FENCE = re.compile(r"^(```|~~~)")


def repository_paths(root):
    """Every file and folder of the checkout (build trees and runs left out), relative to root."""
    paths = set()
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders
                      if f not in SKIPPED_FOLDERS and not f.startswith("build")]
        relative = os.path.relpath(folder, root)
        if relative != ".":
            paths.add(relative.replace(os.sep, "/"))
        for name in files:
            paths.add(os.path.normpath(os.path.join(relative, name)).replace(os.sep, "/"))
    return paths


def top_level_folders(root):
    return {name for name in os.listdir(root)
            if os.path.isdir(os.path.join(root, name)) and name not in SKIPPED_FOLDERS
            and not name.startswith("build")}


def named_paths(text):
    """(line, span) for every backtick span outside fenced code blocks."""
    inside_fence = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line.strip()):
            inside_fence = not inside_fence
            continue
        if inside_fence:
            continue
        for match in SPAN.finditer(line):
            yield number, match.group(1)


def problem(span, document, tops, paths):
    """Why `span` names nothing in the repository, or None when it does (or is not a path)."""
    candidate = span.rstrip("/").split(":")[0]  # `file.cpp:12` names file.cpp
    if any(c in candidate for c in "<>*{}$=()|\"'") or candidate.startswith(("-", "~", "/")):
        return None  # a pattern such as `<name>`, an option or an absolute path: not a file
    beside = os.path.normpath(os.path.join(os.path.dirname(document), candidate))
    if candidate.startswith("../"):
        if beside.startswith(".."):
            return "points outside the repository"
        return None if beside in paths else "does not exist"
    first = candidate.split("/")[0]
    if "/" in candidate and (first in tops or beside in paths):
        return None if candidate in paths or beside in paths else "does not exist"
    if candidate.endswith(SOURCE_KINDS):
        for path in paths:
            if path == candidate or path.endswith("/" + candidate):
                return None
        return "is no file of the repository"
    return None


def main():
    root = sys.argv[1]
    paths = repository_paths(root)
    tops = top_level_folders(root)
    documents = sorted(p for p in paths if p.endswith(".md"))
    failures = []
    for document in documents:
        with open(os.path.join(root, document), encoding="utf-8") as f:
            text = f.read()
        for line, span in named_paths(text):
            why = problem(span, document, tops, paths)
            if why:
                failures.append(f"{document}:{line}: `{span}` {why}")
    for failure in failures:
        print(failure)
    print(f"{len(documents)} documents checked, {len(failures)} missing paths")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
