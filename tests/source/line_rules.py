"""What the source tests share: find the lines of files that match a rule and report each as one
sentence naming the file and line."""
import os
import sys


def matching_lines(root, relative_paths, pattern, without_comments=False):
    """(relative path, line number, match) of every line of the files that matches `pattern`."""
    for relative in relative_paths:
        with open(os.path.join(root, relative), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = pattern.search(line.split("//")[0] if without_comments else line)
                if match:
                    yield relative, number, match


def files_under(root, folder):
    """The files under `folder` (relative to `root`), relative to `root`, in a stable order."""
    for directory, _, files in sorted(os.walk(os.path.join(root, folder))):
        for name in sorted(files):
            yield os.path.relpath(os.path.join(directory, name), root)


def report(problems):
    """Prints each problem and returns the exit status: 1 if any."""
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit("line_rules.py is imported by the source tests, not run")
