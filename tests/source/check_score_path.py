#!/usr/bin/env python3
"""ConditionModule::score's own checks, gather() and the scoring helpers of conditioned modules
(nn::condition_one_hot) read nothing back from the device: no Tensor::equal, item(), copy to the
CPU or other host sync in the files of the score path. On a GPU
each would stall the step (six per step with reversed scores); a declared RoleLayout is trusted
instead (it holds the rows it was declared with).

Prints each read as one sentence naming the file and line, and exits 1 if any.

Usage: check_score_path.py SOURCE_DIR
"""
import re
import sys

from line_rules import matching_lines, report

SCORE_PATH = ["core/sdk/src/plugin/condition_module.cpp", "core/sdk/src/plugin/items.cpp",
              "core/sdk/src/plugin/checks.hpp", "core/sdk/src/nn/scoring.cpp"]
SYNC = re.compile(r'\.equal\(|\.item\b|\.cpu\(\)|kCPU|allclose|is_nonzero|\.tolist\(|'
                  r'\.(min|max|sum|any|all)\(\)')


def syncs(root):
    return [f"{path}:{number} calls {match.group(0)}, which waits for the device on the score "
            "path: check what the host knows without reading tensors back"
            for path, number, match in matching_lines(root, SCORE_PATH, SYNC,
                                                      without_comments=True)]


if __name__ == "__main__":
    sys.exit(report(syncs(sys.argv[1])))
