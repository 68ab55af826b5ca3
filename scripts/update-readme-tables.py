#!/usr/bin/env python3
"""Rewrites the options table (and contract line) of every plugin README and the [trainer] table
of docs/pipelines.md from `wscsl describe --markdown`, which the docs.plugin_readmes test checks.

Usage: scripts/update-readme-tables.py [build directory, default: build]
"""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
KINDS = {"backbones": "backbone", "condition_modules": "condition_module", "datasets": "dataset",
         "evaluators": "evaluator", "losses": "loss", "text_encoders": "text_encoder"}


def describe(wscsl, plugins, what):
    env = dict(os.environ, WSCSL_PLUGIN_PATH=str(plugins))
    return subprocess.run([str(wscsl), "describe", what, "--markdown"], env=env, check=True,
                          capture_output=True, text=True).stdout


def replace_table(path, table):
    lines = path.read_text().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("| option | type |"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    # A contract line written by an earlier run follows the table after one blank line.
    if end + 1 < len(lines) and lines[end] == "" and lines[end + 1].startswith("Contract: "):
        end += 2
    new = table.rstrip("\n").split("\n")
    path.write_text("\n".join(lines[:start] + new + lines[end:]))


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build").resolve()
    wscsl, plugins = build / "bin" / "wscsl", build / "plugins"
    for readme in sorted(ROOT.glob("plugins/*/*/README.md")):
        kind = KINDS[readme.parent.parent.name]
        replace_table(readme, describe(wscsl, plugins, f"{kind}/{readme.parent.name}"))
    replace_table(ROOT / "docs" / "pipelines.md", describe(wscsl, plugins, "trainer"))


if __name__ == "__main__":
    main()
