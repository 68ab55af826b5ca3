#!/usr/bin/env python3
"""Runs every fenced block of the documents that is marked runnable (docs.runnable).

A block is marked by an HTML comment on the line before its fence, which Markdown does not show:

    <!-- runnable -->
    <!-- runnable: --set trainer.epochs=1 --set dataset.train_triplets=128 -->

The arguments after "runnable:" make the case small: they are added to every `wscsl train` of the
block that starts a run (not to `--resume`). Each line of the block runs with bash, in order, in a
scratch folder that holds the checkout's top-level folders (linked) and `build/bin/wscsl` (this
build's), so the block's relative paths and its `runs/` work as written; every line must exit
with status 0.

Usage: run_doc_blocks.py SOURCE_DIR WSCSL_BINARY
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_doc_claims import FENCE, documents, logical_lines  # noqa: E402

MARKER = re.compile(r"^<!--\s*runnable(?::\s*(.*?))?\s*-->\s*$")


def runnable_blocks(text):
    """(first line number, lines, extra train arguments) of every marked block."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if not marker or i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            continue
        body = []
        for later in lines[i + 2:]:
            if FENCE.match(later):
                break
            body.append(later)
        found.append((i + 3, body, shlex.split(marker.group(1) or "")))
    return found


def with_small_case(line, extra):
    """The line with `extra` after a `wscsl train` that starts a run."""
    tokens = shlex.split(line, comments=True)
    for i, token in enumerate(tokens[:-1]):
        if (token == "wscsl" or token.endswith("/wscsl")) and tokens[i + 1] == "train" \
                and "--resume" not in tokens:
            return shlex.join(tokens + extra)
    return line


def scratch_folder(root, wscsl, scratch):
    for name in os.listdir(root):
        if name.startswith(("build", ".")) or name == "runs":
            continue
        os.symlink(os.path.join(root, name), os.path.join(scratch, name))
    os.makedirs(os.path.join(scratch, "build", "bin"))
    os.symlink(wscsl, os.path.join(scratch, "build", "bin", "wscsl"))


def main():
    root, wscsl = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failures, ran = [], 0
    for document in documents(root):
        with open(os.path.join(root, document), encoding="utf-8") as f:
            marked = runnable_blocks(f.read())
        for start, body, extra in marked:
            with tempfile.TemporaryDirectory(prefix="wscsl_doc_block_") as scratch:
                scratch_folder(root, wscsl, scratch)
                env = dict(os.environ,
                           PATH=os.path.join(scratch, "build", "bin") + os.pathsep +
                           os.environ.get("PATH", ""))
                for number, line in logical_lines(body, start):
                    if not line.strip() or line.strip().startswith("#"):
                        continue
                    command = with_small_case(line, extra)
                    ran += 1
                    done = subprocess.run(["bash", "-c", command], cwd=scratch, env=env,
                                          capture_output=True, text=True)
                    if done.returncode != 0:
                        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
                        failures.append(f"{document}:{number}: exit status {done.returncode}: "
                                        f"{command}\n  " + "\n  ".join(tail))
                        break
                    print(f"{document}:{number}: ok: {line.strip()}")
    for failure in failures:
        print(failure)
    print(f"{ran} command lines of runnable blocks run, {len(failures)} failed")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
