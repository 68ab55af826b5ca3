#!/usr/bin/env python3
"""The host's layout rules hold: no file of host/ is longer than 300 lines, the folders of
host/src include one another without a cycle (a folder's `#include "other/…"` is an edge from it to
other/; a cycle means neither can be understood, built or tested without the other), and LibTorch's
thread counts are set in one place, host/src/distributed/placement.cpp (use_threads: once per
process, from its placement, which shares the machine's cores among its local processes, called by
the process's Strategy alone, which also joins its communicator), and the
command line is one list: each command of host/src/cli is a Command in a file of its own that adds
its own options, and main.cpp lists every one of them and declares no option or subcommand itself.

Prints each broken rule as one sentence naming the file or the folders, and exits 1 if any.

Usage: check_host_layout.py SOURCE_DIR
"""
import os
import re
import sys

MAX_LINES = 300
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/', re.MULTILINE)


def long_files(root):
    problems = []
    for folder, _, files in os.walk(os.path.join(root, "host")):
        for name in sorted(files):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                lines = f.read().count(b"\n")
            if lines > MAX_LINES:
                problems.append(f"{os.path.relpath(path, root)} has {lines} lines, more than "
                                f"{MAX_LINES}: split it by job")
    return problems


def include_edges(src):
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    edges = {f: set() for f in folders}
    for folder in folders:
        for name in os.listdir(os.path.join(src, folder)):
            with open(os.path.join(src, folder, name), encoding="utf-8") as f:
                for target in INCLUDE.findall(f.read()):
                    if target in edges and target != folder:
                        edges[folder].add(target)
    return edges


def cycles(edges):
    """Each cycle of the folder graph once, as the list of its folders."""
    found, seen = [], set()

    def visit(node, path):
        for nxt in sorted(edges[node]):
            if nxt in path:
                cycle = path[path.index(nxt):]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    found.append(cycle)
            elif len(path) < len(edges):
                visit(nxt, path + [nxt])

    for start in sorted(edges):
        visit(start, [start])
    return found


THREAD_SETTERS = re.compile(r"\b(?:at|torch)::set_num(?:_interop)?_threads\b|\bomp_set_num_threads\b")
THREADS_HOME = os.path.join("host", "src", "distributed", "placement.cpp")


def thread_setters(root):
    """Every place of host/ that sets a thread count, as (path, line number), and the problems."""
    found = []
    for folder, _, files in os.walk(os.path.join(root, "host")):
        for name in sorted(files):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if THREAD_SETTERS.search(line.split("//")[0]):
                        found.append((os.path.relpath(path, root), number))
    problems = [f"{path}:{number} sets a thread count; the host sets it in {THREADS_HOME} alone "
                f"(use_threads with the process's placement)"
                for path, number in found if path != THREADS_HOME]
    if len([f for f in found if f[0] == THREADS_HOME]) != 1:
        problems.append(f"{THREADS_HOME} should set LibTorch's thread count exactly once "
                        f"(use_threads)")
    return problems


COMPOSERS = re.compile(r"\b(use_threads|Communicator::(?:join|single))\s*\(")
STRATEGY_HOME = os.path.join("host", "src", "distributed", "strategy.cpp")
COMPOSER_EXCEPTIONS = {
    # The communicator's own file.
    os.path.join("host", "src", "distributed", "communicator.cpp"),
    THREADS_HOME,
    os.path.join("host", "src", "distributed", "placement.hpp"),  # where use_threads is declared
}


def strategy_composers(root):
    """A process's threads are set, and its communicator joined, by its Strategy alone."""
    problems = []
    for folder, _, files in os.walk(os.path.join(root, "host", "src")):
        for name in sorted(files):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if relative == STRATEGY_HOME or relative in COMPOSER_EXCEPTIONS:
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    match = COMPOSERS.search(line.split("//")[0])
                    if match:
                        problems.append(f"{relative}:{number} calls {match.group(1)}; a process "
                                        f"is placed and joins its job through its Strategy "
                                        f"({STRATEGY_HOME})")
    return problems


CLI_DIR = os.path.join("host", "src", "cli")
MAIN = os.path.join(CLI_DIR, "main.cpp")
PARSER_CALLS = re.compile(r"\b(add_option|add_flag|add_subcommand|add_option_function|"
                          r"add_flag_function|set_version_flag|require_subcommand)\b")
COMMAND_CLASS = re.compile(r"^class\s+(\w+)\s+(?:final\s*)?:\s*public\s+Command\b", re.MULTILINE)
LISTED = re.compile(r"\badd<(\w+)>\(\)")


def command_list(root):
    """main.cpp declares no option or subcommand, every Command has a file of its own, and main.cpp
    lists each one."""
    problems = []
    with open(os.path.join(root, MAIN), encoding="utf-8") as f:
        main_text = f.read()
    for number, line in enumerate(main_text.splitlines(), 1):
        if PARSER_CALLS.search(line.split("//")[0]):
            problems.append(f"{MAIN}:{number} declares an option or subcommand; main.cpp only "
                            f"lists the commands, each of which adds its own (command.hpp)")
    listed = set(LISTED.findall(main_text))
    commands = {}
    for name in sorted(os.listdir(os.path.join(root, CLI_DIR))):
        if not name.endswith(".hpp"):
            continue
        path = os.path.join(CLI_DIR, name)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            found = COMMAND_CLASS.findall(f.read())
        if len(found) > 1:
            problems.append(f"{path} declares {len(found)} commands ({', '.join(found)}): one "
                            f"file per command")
        for command in found:
            commands[command] = path
    for command, path in sorted(commands.items()):
        if command not in listed:
            problems.append(f"{path} declares {command}, which {MAIN} does not list "
                            f"(add<{command}>())")
    for command in sorted(listed - set(commands)):
        problems.append(f"{MAIN} lists {command}, which no header of {CLI_DIR} declares as a "
                        f"Command")
    return problems


def main():
    root = sys.argv[1]
    problems = long_files(root)
    problems += thread_setters(root)
    problems += command_list(root)
    problems += strategy_composers(root)
    for cycle in cycles(include_edges(os.path.join(root, "host", "src"))):
        problems.append("host/src/" + " → host/src/".join(cycle + [cycle[0]]) +
                        ": the folders include one another in a cycle")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
