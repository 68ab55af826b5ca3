#!/usr/bin/env python3
"""Every component type that the in-tree plugins register is used by at least one example: a
pipeline or suite under examples/ names it as the `type` of its [dataset], [backbone],
[condition_module], [[text_encoders]], [[losses]] or [[evaluators]] (docs.examples).

Usage: check_examples_cover_plugins.py SOURCE_DIR WSCSL_BINARY PLUGIN_DIR
"""
import json
import os
import subprocess
import sys
import tomllib

TABLES = {"dataset": "dataset", "backbone": "backbone", "condition_module": "condition_module"}
LISTS = {"text_encoders": "text_encoder", "losses": "loss", "evaluators": "evaluator"}


def registered(wscsl, plugin_dir):
    env = dict(os.environ, WSCSL_PLUGIN_PATH=plugin_dir)
    listed = json.loads(subprocess.run([wscsl, "plugins", "--json"], env=env, check=True,
                                       capture_output=True, text=True).stdout)
    if listed["refused"]:
        sys.exit(f"refused plugins: {listed['refused']}")
    return {t for plugin in listed["plugins"] for t in plugin["types"]}


def used(root):
    """{"kind/type": first example file that uses it}."""
    found = {}
    for folder, folders, files in os.walk(os.path.join(root, "examples")):
        folders.sort()
        for name in sorted(files):
            if not name.endswith(".toml"):
                continue
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                document = tomllib.load(f)
            entries = [(kind, document.get(key)) for key, kind in TABLES.items()]
            entries += [(kind, entry) for key, kind in LISTS.items()
                        for entry in document.get(key, [])]
            for kind, table in entries:
                if isinstance(table, dict) and isinstance(table.get("type"), str):
                    found.setdefault(f"{kind}/{table['type']}", os.path.relpath(path, root))
    return found


def main():
    root, wscsl, plugin_dir = sys.argv[1:4]
    types = registered(wscsl, plugin_dir)
    examples = used(root)
    unused = sorted(types - set(examples))
    for t in unused:
        print(f"{t} is registered, and no example under examples/ uses it")
    print(f"{len(types)} registered component types, {len(types) - len(unused)} used by an "
          f"example, {len(unused)} unused")
    return 1 if unused else 0


if __name__ == "__main__":
    sys.exit(main())
