#!/usr/bin/env python3
"""The claims of the Markdown documents that the code can check (docs.claims).

* Commands: every `wscsl` command line in a fenced block of README.md, docs/, examples/ and the
  plugins' READMEs names a command that exists and only flags that command has, as
  docs/reference/commands.md (generated from `--help`) lists them; the keys of its `--set`
  overrides are options (below).
* Option names: every backtick span of prose that names a pipeline key — `trainer.lr`,
  `dataset.cache_dir`, `condition_module.num_embeddings=2`, `losses.0.margin` — is an option of
  that section in docs/reference/options.md (generated from `wscsl describe`), or a fact the host
  derives (`dataset.num_conditions`, declared in core/formats/include/wscsl/config/facts.hpp).
* Quoted numbers: a link whose text holds a number and whose target is a section of a benchmark
  page (docs/benchmarks.md, results.md, platforms.md, reproduce.md), as in
  `[66.4 minutes](docs/platforms.md#ci-and-its-times)`, quotes that page: the section under that
  heading holds the link's text.
* Links: a link to a section of a document (`docs/datasets.md#image-stores`) finds its heading.
* The index: docs/README.md links every document under docs/, and every document it links exists.
* The host's file table of docs/architecture.md names every source file of each folder of
  host/src, and no other.
* The legs' status — README's "Supported systems" status column and docs/platforms.md's table of
  last runs — is what scripts/legs.py generates from the record docs/legs.tsv; no page says "this
  machine" for the project's machine.
* What a change says of a leg stays true: no CHANGELOG entry says a leg (`scripts/test.sh --X`)
  has not yet run when the CHANGELOG lists a run of it.
* A time of the search's exact stage names the index format it was measured in ("format N"):
  the format changes the stage's memory layout, and a time without it reads as today's.
* README.md, the front door, stays short: at most 120 lines, no sentence (or table cell) of its
  prose over 40 words.

Usage: check_doc_claims.py SOURCE_DIR
"""
import importlib.util
import os
import re
import shlex
import sys

BENCHMARK_PAGES = {"docs/benchmarks.md", "docs/results.md", "docs/platforms.md",
                   "docs/reproduce.md"}
SECTIONS = {"trainer": "trainer", "dataset": "dataset", "backbone": "backbone",
            "condition_module": "condition_module"}
LIST_SECTIONS = {"losses": "loss", "evaluators": "evaluator", "text_encoders": "text_encoder"}
SHELL_LANGUAGES = {"", "sh", "bash", "shell", "console", "text"}
LAUNCHERS = {"torchrun", "srun", "exec", "time", "nice", "env", "sudo", "mpirun"}
SOURCE_SUFFIXES = (".hpp", ".cpp", ".h", ".cmake", ".py", ".md", ".toml")
FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
SPAN = re.compile(r"`([^`]+)`")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
README_LINES, README_SENTENCE_WORDS = 120, 40
VALUED = set()  # the flags that take a value (command_reference fills it)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def documents(root):
    """README.md, every document under docs/ (but the generated reference), examples/ and plugins/."""
    found = ["README.md"]
    for top in ("docs", "examples", "plugins"):
        for folder, folders, files in os.walk(os.path.join(root, top)):
            folders[:] = sorted(f for f in folders if f != "reference")
            for name in sorted(files):
                if name.endswith(".md"):
                    found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def blocks(text):
    """(language, first line number, lines) of every fenced block, and prose lines apart."""
    fenced, prose, inside, language, start, lines = [], [], False, "", 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence and not inside:
            inside, language, start, lines = True, fence.group(2).lower(), number + 1, []
        elif fence and inside and not fence.group(2):
            fenced.append((language, start, lines))
            inside = False
        elif inside:
            lines.append(line)
        else:
            prose.append((number, line))
    return fenced, prose


# --- the references -----------------------------------------------------------------------------
def command_reference(root):
    """{('train',): {'--set', ...}, ('cache', 'list'): {...}, (): global flags}, fallthrough set."""
    text = read(root, "docs/reference/commands.md")
    flags, current, fallthrough = {}, None, set()
    for line in text.splitlines():
        heading = re.match(r"^## wscsl ?(.*)$", line)
        if heading:
            current = tuple(heading.group(1).split())
            flags[current] = set()
            continue
        if current is None:
            continue
        # "  --set TEXT ...   Override…": CLI11 writes a flag's value type one space after it.
        option = re.match(r"^\s+(-[\w-]+(?:,\s*-[\w-]+)*)( [A-Z]+)?", line)
        if option:
            for flag in re.split(r",\s*", option.group(1)):
                flags[current].add(flag)
                if option.group(2):
                    VALUED.add(flag)
    # A command whose own flags may follow its subcommand (CLI11's fallthrough): `cache`.
    for words in flags:
        if len(words) > 1 and words[:-1] in flags and "--cache-dir" in flags[words[:-1]]:
            fallthrough.add(words[:-1])
    return flags, fallthrough


def option_reference(root):
    """{section: set of keys} from docs/reference/options.md, and the facts describe names."""
    text = read(root, "docs/reference/options.md")
    options, section = {}, None
    facts = set(re.findall(r"\bfrom ([a-z_]+\.[a-z_]+)\b", text))
    # The facts the host derives are declared in one header, whether or not an option takes one.
    facts |= set(re.findall(r'Fact \w+\{\s*"([a-z_]+\.[a-z_]+)"',
                            read(root, "core/formats/include/wscsl/config/facts.hpp")))
    for line in text.splitlines():
        heading = re.match(r"^## (\w+)(?:/\w+)?$", line)
        if heading:
            section = heading.group(1)
            options.setdefault(section, set())
            continue
        row = re.match(r"^\| `([\w.]+)` \|", line)
        if row and section:
            options[section].add(row.group(1))
    return options, facts


def option_problem(name, options, facts):
    """Why `name` (section.key, maybe with =value) is not a pipeline key, or None."""
    key = name.split("=", 1)[0]
    parts = key.split(".")
    if key in facts:
        return None
    if parts[0] in SECTIONS and len(parts) == 2:
        if parts[1] in options.get(SECTIONS[parts[0]], set()):
            return None
        if parts[0] == "trainer":
            return f"[trainer] has no option '{parts[1]}'"
        return f"no {parts[0]} type has the option '{parts[1]}'"
    if parts[0] in LIST_SECTIONS and len(parts) == 3 and parts[1].isdigit():
        if parts[2] in options.get(LIST_SECTIONS[parts[0]], set()):
            return None
        return f"no {LIST_SECTIONS[parts[0]]} type has the option '{parts[2]}'"
    return f"'{key}' is not a pipeline key (section.key, or losses.N.key for a list)"


def named_option(span):
    """The span when it is written as a pipeline key (`trainer.lr`, `losses.0.margin=0.1`)."""
    key = span.split("=", 1)[0]
    if key.endswith(SOURCE_SUFFIXES):
        return None
    tables = "|".join(SECTIONS)
    lists = "|".join(LIST_SECTIONS)
    if re.fullmatch(rf"(?:{tables})\.\w+|(?:{lists})\.\d+\.\w+", key):
        return span
    return None


# --- commands in fenced blocks ------------------------------------------------------------------
def logical_lines(lines, start):
    """(line number, text) with backslash continuations joined and a console's '$ ' dropped."""
    joined, number, pending = [], start, ""
    for offset, line in enumerate(lines):
        if not pending:
            number = start + offset
        stripped = line.rstrip()
        if stripped.startswith("$ "):
            stripped = stripped[2:]
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        joined.append((number, pending + stripped))
        pending = ""
    if pending:
        joined.append((number, pending))
    return joined


def command_tokens(line):
    """The tokens after `wscsl` of each command of a shell line, or [] where there is none."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:
        return []
    found, segment = [], []
    for token in tokens + [";"]:
        if token in {";", "&&", "||", "|", "&", "(", ")", ">", ">>", "<", "2>", "2>&1"} or \
                set(token) <= set(";&|()<>"):
            found.extend(wscsl_call(segment))
            segment = []
        else:
            segment.append(token)
    return found


def wscsl_call(segment):
    for i, token in enumerate(segment):
        if token == "wscsl" or token.endswith("/wscsl"):
            before = segment[:i]
            if not before or before[0] in LAUNCHERS or re.match(r"^\w+=", before[0]):
                return [segment[i + 1:]]
            return []
    return []


def command_problem(args, flags, fallthrough, options, facts):
    """Why this `wscsl` argument list does not parse, or None."""
    words, i = (), 0
    allowed = set(flags[()])
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and not re.match(r"^-\d", arg):
            flag = arg.split("=", 1)[0]
            if flag not in allowed:
                where = "wscsl " + " ".join(words) if words else "wscsl"
                return f"'{flag}' is no flag of `{where.strip()}`"
            value = arg.split("=", 1)[1] if "=" in arg else \
                (args[i + 1] if i + 1 < len(args) else "")
            if flag == "--set":
                why = option_problem(value, options, facts)
                if why:
                    return f"--set {value}: {why}"
            i += 1 if "=" in arg or flag not in VALUED else 2
            continue
        candidate = words + (arg,)
        if candidate in flags:
            words = candidate
            allowed = set(flags[words]) | (set(flags[words[:-1]]) if words[:-1] in fallthrough
                                           else set())
        elif not words:
            return f"'{arg}' is no command of wscsl"
        i += 1
    if not words and not (set(args) & {"--help", "-h", "--version"}):
        return "no command"
    return None


# --- quoted numbers -----------------------------------------------------------------------------
def anchor(heading):
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def section_text(text, wanted):
    """The text under the heading whose anchor is `wanted`, to the next heading of its level."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        heading = HEADING.match(line)
        if heading and anchor(heading.group(2)) == wanted:
            level = len(heading.group(1))
            body = []
            for later in lines[i + 1:]:
                deeper = HEADING.match(later)
                if deeper and len(deeper.group(1)) <= level:
                    break
                body.append(later)
            return "\n".join(body)
    return None


def plain(text):
    return re.sub(r"\s+", " ", text.replace("**", "").replace("`", ""))


# --- the index and the architecture's file table ------------------------------------------------
def index_problems(root):
    text = read(root, "docs/README.md")
    linked, problems = set(), []
    for match in LINK.finditer(text):
        target = match.group(2).split("#")[0]
        if not target or "://" in target:
            continue
        path = os.path.normpath(os.path.join("docs", target))
        if not os.path.exists(os.path.join(root, path)):
            problems.append(f"docs/README.md: links {target}, which does not exist")
        linked.add(path)
    for folder, _, files in os.walk(os.path.join(root, "docs")):
        for name in files:
            path = os.path.relpath(os.path.join(folder, name), root)
            if name.endswith(".md") and path != "docs/README.md" and path not in linked:
                problems.append(f"docs/README.md: does not list {path}")
    return problems


def split_top_level(cell):
    items, depth, current = [], 0, ""
    for c in cell:
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += c
    return items + [current]


def file_table_problems(root):
    text = read(root, "docs/architecture.md")
    body = section_text(text, "host-files")
    if body is None:
        return ["docs/architecture.md: no section 'Host files'"]
    problems, rows = [], 0
    for line in body.splitlines():
        row = re.match(r"^\| `([\w]+)/` \| (.*) \|$", line)
        if not row:
            continue
        rows += 1
        folder = row.group(1)
        named = set()
        for item in split_top_level(row.group(2)):
            first = SPAN.search(item)
            if first:
                named.add(re.sub(r"\.(c|h)pp$", "", first.group(1)))
        present = {re.sub(r"\.(c|h)pp$", "", n)
                   for n in os.listdir(os.path.join(root, "host", "src", folder))
                   if n.endswith((".cpp", ".hpp"))}
        for missing in sorted(present - named):
            problems.append(f"docs/architecture.md: host/src/{folder}/ has {missing}, which the "
                            "file table does not name")
        for extra in sorted(named - present):
            problems.append(f"docs/architecture.md: the file table names {folder}/{extra}, which "
                            "host/src has not")
    folders = {f for f in os.listdir(os.path.join(root, "host", "src"))
               if os.path.isdir(os.path.join(root, "host", "src", f))}
    if rows != len(folders):
        problems.append(f"docs/architecture.md: the file table has {rows} folders, host/src has "
                        f"{len(folders)}")
    return problems


def readme_problems(root):
    text = read(root, "README.md")
    problems = []
    if len(text.splitlines()) > README_LINES:
        problems.append(f"README.md: {len(text.splitlines())} lines, more than {README_LINES}")
    _, prose = blocks(text)
    paragraphs, current = [], []
    for number, line in prose:
        if line.startswith("|"):
            paragraphs += [(number, cell) for cell in line.strip("|").split(" | ")]
        elif not line.strip() or line.startswith(("#", "<!--")):
            paragraphs.append((current[0][0], " ".join(s for _, s in current)) if current
                              else (number, ""))
            current = []
        else:
            current.append((number, line.strip().lstrip("* ")))
    if current:
        paragraphs.append((current[0][0], " ".join(s for _, s in current)))
    for number, paragraph in paragraphs:
        for sentence in re.split(r"(?<=[.!?:])\s+(?=[A-Z`\[(])", paragraph):
            words = len(sentence.split())
            if words > README_SENTENCE_WORDS:
                problems.append(f"README.md:{number}: a sentence of {words} words (at most "
                                f"{README_SENTENCE_WORDS}): {sentence[:60]}…")
    return problems


def legs_problems(root):
    """The legs' status as scripts/legs.py makes it from the record, and no page speaking of "this
    machine": the project's machines change, and a page cannot say which one it meant."""
    spec = importlib.util.spec_from_file_location("legs", os.path.join(root, "scripts", "legs.py"))
    legs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(legs)
    problems = legs.problems(legs.pathlib.Path(root))
    for document in documents(root):
        for number, line in enumerate(read(root, document).split("\n"), 1):
            if re.search(r"\bthis (2-core )?(Debian 12 )?machine\b", line, re.I):
                problems.append(f"{document}:{number}: says 'this machine'; name the machine "
                                "(e.g. 'a 2-core Debian 12 machine')")
    return problems


def changelog_problems(root):
    """CHANGELOG entries that say a leg has not yet run, where the CHANGELOG lists its runs."""
    text = read(root, "CHANGELOG.md")
    ran = set(re.findall(r"^\*\*[^\n]*\*\* \(`scripts/test\.sh (--[\w-]+)`\):", text, re.M))
    problems, entry, first = [], "", 0
    for number, line in enumerate(text.split("\n") + ["- "], 1):
        if line.startswith("- ") or not line.strip():
            for leg in re.findall(r"`scripts/test\.sh (--[\w-]+)`", entry):
                if leg in ran and re.search(r"not (yet )?(been )?run", entry):
                    problems.append(f"CHANGELOG.md:{first}: says the leg `scripts/test.sh {leg}` "
                                    "has not run, and the CHANGELOG lists its runs")
            entry, first = line, number
        else:
            entry += " " + line.strip()
    return problems


def exact_stage_problems(root):
    """Sentences of the documents that time the search's exact stage without naming the index
    format they were measured in."""
    problems = []
    for document in documents(root):
        for paragraph in re.split(r"\n\s*\n", read(root, document)):
            for sentence in re.split(r"(?<=[.:;])\s+", " ".join(paragraph.split())):
                if (re.search(r"exact stage (takes|took|answers|spends)", sentence) and
                        re.search(r"\d\s*ms\b", sentence) and
                        not re.search(r"\bformat \d", sentence)):
                    problems.append(f"{document}: \"{sentence[:80]}…\" times the exact stage "
                                    "without naming the index format it was measured in")
    return problems


def main():
    root = sys.argv[1]
    flags, fallthrough = command_reference(root)
    options, facts = option_reference(root)
    problems, commands, names, quotes = [], 0, 0, 0
    for document in documents(root):
        text = read(root, document)
        fenced, prose = blocks(text)
        for language, start, lines in fenced:
            if language not in SHELL_LANGUAGES:
                continue
            for number, line in logical_lines(lines, start):
                for args in command_tokens(line):
                    commands += 1
                    why = command_problem(args, flags, fallthrough, options, facts)
                    if why:
                        problems.append(f"{document}:{number}: {why}: {line.strip()}")
        for number, line in prose:
            for span in SPAN.findall(line):
                name = named_option(span)
                if name:
                    names += 1
                    why = option_problem(name, options, facts)
                    if why:
                        problems.append(f"{document}:{number}: `{span}`: {why}")
            for match in LINK.finditer(line):
                label, target = match.groups()
                if "#" not in target or "://" in target:
                    continue
                path, wanted = target.split("#", 1)
                page = os.path.normpath(os.path.join(os.path.dirname(document), path or
                                                     os.path.basename(document)))
                if not page.endswith(".md") or not os.path.exists(os.path.join(root, page)):
                    continue
                section = section_text(read(root, page), wanted)
                if section is None:
                    problems.append(f"{document}:{number}: {page} has no section #{wanted}")
                elif page in BENCHMARK_PAGES and re.search(r"\d", label):
                    quotes += 1
                    if plain(label) not in plain(section):
                        problems.append(f"{document}:{number}: '{label}' is not what "
                                        f"{page}#{wanted} says")
    problems += index_problems(root)
    problems += file_table_problems(root)
    problems += readme_problems(root)
    problems += legs_problems(root)
    problems += changelog_problems(root)
    problems += exact_stage_problems(root)
    for problem in problems:
        print(problem)
    print(f"{commands} command lines, {names} option names, {quotes} quoted numbers checked; "
          f"the index and the host's file table; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
