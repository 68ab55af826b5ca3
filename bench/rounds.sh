# Shared by bench/threads.sh and bench/ddp.sh (sourced after bench/common.sh): Fashion-CRB's
# pixels for PyTorch, PyTorch's rate on them, and rows measured in turn for several rounds so that
# a machine whose speed drifts moves all rows alike. Needs $steps and $rounds set by the script.

# export_pixels: Fashion-CRB's pixels and training triplets for PyTorch in $work/crb
# (docs/datasets.md, `wscsl export`).
export_pixels() {
  "$wscsl" export examples/pipelines/default.toml --out "$work/crb" --set dataset.train_items=4000 \
    --set dataset.val_items=200 --set dataset.test_items=200 \
    --set dataset.train_triplets=$((steps * 64)) >/dev/null
}

# pytorch_rate <threads> [bench/eager_reference.py arguments...]: PyTorch in Python (Debian's
# python3-torch) training the default net on the exported pixels; prints its steps per second.
pytorch_rate() {
  local threads=$1
  shift
  /usr/bin/python3 bench/eager_reference.py "$work/crb" --model default --device cpu \
    --threads "$threads" --steps "$steps" "$@" |
    python3 -c 'import json, sys; print(json.loads(sys.stdin.readlines()[-1])["steps_per_s"])'
}

# take_rounds <unit> <units> <rate function> <name...>: for $rounds rounds, calls
# `<rate function> <name> <1 or 2>` for every name at 1 and at 2 units (threads, processes) in
# turn, printing each rate and the load average before each round; then a table of each name's
# median at 1 and at 2 with the ratio of 2 to 1.
take_rounds() {
  local unit=$1 units=$2 rate_of=$3
  shift 3
  local names=("$@") round name count rate
  declare -A rates
  for round in $(seq "$rounds"); do
    echo "round $round: load average $(cut -d' ' -f1-3 /proc/loadavg)"
    for name in "${names[@]}"; do
      for count in 1 2; do
        rate=$("$rate_of" "$name" "$count")
        rates[$name|$count]="${rates[$name|$count]:-} $rate"
        echo "round $round: $name, $count $([ "$count" = 1 ] && echo "$unit" || echo "$units"): $rate steps/s"
      done
    done
  done
  echo "after the rounds: load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| implementation | 1 $unit (steps/s) | 2 $units (steps/s) | 2 ÷ 1 |"
  echo "|---|---:|---:|---:|"
  for name in "${names[@]}"; do
    local one two
    one=$(median <<<"${rates[$name|1]}")
    two=$(median <<<"${rates[$name|2]}")
    echo "| $name | $one | $two | $(ratio "$two" "$one") |"
  done
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
