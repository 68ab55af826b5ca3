# Shared by the bench scripts (sourced, after `cd` to the checkout): builds the runtime and
# defines `steps_per_second`, `best_of_three`, `ratio` and `replace_section`. Needs $steps (steps per measurement) set by the
# script.
scripts/build.sh --target runtime >/dev/null
wscsl=build/bin/wscsl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# steps_per_second <run dir> [environment setting or ""] [train arguments...]: trains the default
# pipeline (or $pipeline) for $steps steps of 64 triplets (one epoch, no validation) and prints its
# rate.
steps_per_second() {
  local dir=$1 env_setting=$2
  shift 2
  rm -rf "$dir"
  # shellcheck disable=SC2086
  env $env_setting "$wscsl" train "${pipeline:-examples/pipelines/default.toml}" --run-dir "$dir" \
    --set dataset.train_triplets=$((steps * 64)) --set trainer.epochs=1 \
    --set trainer.validate=false --set trainer.evaluate_after=false \
    --set trainer.log_every="$steps" "$@" 2>&1 |
    sed -n "s|.* ${steps}/${steps} (100%) \([0-9.]*\) it/s.*|\1|p"
}

# best_of_three <command...>: runs a command that prints a rate three times; prints the highest.
best_of_three() {
  local best=0 rate
  for _ in 1 2 3; do
    rate=$("$@")
    best=$(awk -v a="$best" -v b="$rate" 'BEGIN { print (b > a ? b : a) }')
  done
  echo "$best"
}

# ratio <rate> <base>: rate / base with two decimals.
ratio() {
  awk -v r="$1" -v b="$2" 'BEGIN { printf "%.2f", r / b }'
}

# replace_section <file> <name> <text>: replaces what lies between "<!-- <name>" and
# "<!-- /<name> -->" in <file> (both markers included) by <text>, which starts and ends with them.
replace_section() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
path, name, section = sys.argv[1:]
text = open(path).read()
pattern = re.compile(r"<!-- " + re.escape(name) + r"[: ].*?<!-- /" + re.escape(name) + r" -->", re.S)
if not pattern.search(text):
    sys.exit(f"{path} has no {name} section to replace")
open(path, "w").write(pattern.sub(lambda _: section, text))
PY
}
