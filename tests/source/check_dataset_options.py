#!/usr/bin/env python3
"""No code of host/src reads a dataset's option by name: what the host needs of how a dataset
prepares its images is the value the dataset declares (DatasetInfo::images, see
core/sdk/include/wscsl/plugin/image_preparation.hpp), so a dataset that prepares images otherwise
is never searched with the wrong input.

Prints each read as one sentence naming the file and line, and exits 1 if any.

Usage: check_dataset_options.py SOURCE_DIR
"""
import re
import sys

from line_rules import files_under, matching_lines, report

# A helper that looks a dataset option up, the dataset's table of the resolved configuration, or
# one of the image options of core/data's ImageDatasetOptions named as a string.
READS = re.compile(r'dataset_option\(|find\("dataset"\)|\["dataset"\]|'
                   r'"(normalize|max_image_pixels|cache_dir|cache_limit_mb|image_size)"')


def reads(root):
    return [f"{path}:{number} reads {match.group(0)}: the host reads what a dataset declares "
            "(DatasetInfo::images), not its options by name"
            for path, number, match in matching_lines(root, files_under(root, "host/src"), READS)]


if __name__ == "__main__":
    sys.exit(report(reads(sys.argv[1])))
