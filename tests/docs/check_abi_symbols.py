#!/usr/bin/env python3
"""Every plugin register symbol a document names (`wscsl_plugin_register_abi8`) is the one the code
exports: its number is WSCSL_PLUGIN_ABI_VERSION of core/sdk/include/wscsl/plugin/abi.h.

Usage: check_abi_symbols.py SOURCE_DIR
"""
import os
import re
import sys

SYMBOL = re.compile(r"wscsl_plugin_register_abi(\d+)")
VERSION = re.compile(r"^#define WSCSL_PLUGIN_ABI_VERSION (\d+)$", re.MULTILINE)
SKIPPED_FOLDERS = {".git", "runs", ".cache"}


def main(root):
    with open(os.path.join(root, "core/sdk/include/wscsl/plugin/abi.h"), encoding="utf-8") as f:
        found = VERSION.search(f.read())
    if not found:
        print("abi.h: no '#define WSCSL_PLUGIN_ABI_VERSION <number>' line")
        return 1
    version = found.group(1)
    stale, named = [], 0
    for folder, folders, files in os.walk(root):
        folders[:] = [d for d in folders
                      if d not in SKIPPED_FOLDERS and not d.startswith("build")]
        for name in files:
            if not name.endswith(".md"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    for symbol in SYMBOL.finditer(line):
                        named += 1
                        if symbol.group(1) != version:
                            stale.append(f"{os.path.relpath(path, root)}:{number}: names "
                                         f"{symbol.group(0)}, the code exports "
                                         f"wscsl_plugin_register_abi{version}")
    for line in stale:
        print(line)
    if named == 0:
        print("no document names the register symbol: docs/architecture.md should")
        return 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
