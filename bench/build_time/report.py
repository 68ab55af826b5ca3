#!/usr/bin/env python3
"""Summarises bench/build_time.sh's log ("<output> <wall s> <cpu s>" per compile or link command):
the wall times of the build, then every target's translation units and link with their CPU
seconds, costliest first, as a Markdown table."""
import argparse
import collections
import os
import re

parser = argparse.ArgumentParser()
parser.add_argument("log")
parser.add_argument("--runtime", type=float, required=True, help="wall seconds of `runtime`")
parser.add_argument("--total", type=float, required=True, help="wall seconds of everything")
parser.add_argument("--jobs", type=int, required=True)
parser.add_argument("--torch", required=True, help="the LibTorch's CMake folder")
parser.add_argument("--top", type=int, default=25, help="targets listed (the rest summed)")
arguments = parser.parse_args()

object_of = re.compile(r"CMakeFiles/([^/]+)\.dir/")
compiles = collections.defaultdict(lambda: [0, 0.0])  # target: [units, CPU s]
links = {}
for number, line in enumerate(open(arguments.log), 1):
    fields = line.split()
    if len(fields) != 3:
        raise SystemExit(f"{arguments.log}:{number}: expected '<output> <wall s> <cpu s>', got {line!r}")
    output, _, cpu = fields[0], float(fields[1]), float(fields[2])
    match = object_of.search(output)
    if match:  # a plugin's objects count as the plugin's
        target = re.sub(r"_objects$", "", match.group(1))
        compiles[target][0] += 1
        compiles[target][1] += cpu
    else:  # a plugin's module is libwscsl_<plugin>.so
        name = re.sub(r"^lib(.*)\.(so|a)$", r"\1", os.path.basename(output))
        links[name] = links.get(name, 0.0) + cpu
for name in list(links):
    plugin = name[len("wscsl_"):]
    if name.startswith("wscsl_") and name not in compiles and plugin in compiles:
        links[plugin] = links.pop(name)

targets = set(compiles) | set(links)
rows = sorted(((compiles[t][1] + links.get(t, 0.0), t) for t in targets), reverse=True)
units = sum(c[0] for c in compiles.values())
compile_cpu = sum(c[1] for c in compiles.values())
link_cpu = sum(links.values())
print(f"LibTorch: `{arguments.torch}`; {arguments.jobs} jobs, ccache off.\n")
print("| part | wall minutes |")
print("|---|---:|")
print(f"| `runtime` (the program and its plugins) | {arguments.runtime / 60:.1f} |")
print(f"| everything | {arguments.total / 60:.1f} |\n")
print(f"{units} translation units, {compile_cpu / 60:.1f} CPU minutes; "
      f"{len(links)} links, {link_cpu / 60:.1f} CPU minutes.\n")
print("| target | units | compile CPU s | link CPU s |")
print("|---|---:|---:|---:|")
for _, target in rows[: arguments.top]:
    count, cpu = compiles.get(target, (0, 0.0))
    print(f"| {target} | {count} | {cpu:.0f} | {links.get(target, 0.0):.1f} |")
rest = rows[arguments.top :]
if rest:
    print(f"| {len(rest)} other targets | {sum(compiles[t][0] for _, t in rest if t in compiles)} | "
          f"{sum(compiles[t][1] for _, t in rest if t in compiles):.0f} | "
          f"{sum(links.get(t, 0.0) for _, t in rest):.1f} |")
