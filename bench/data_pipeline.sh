#!/usr/bin/env bash
# The data pipeline on a folder of generated JPEGs (image_folder, 112 px): private memory
# (peak RssAnon) of 1 and 2 processes, time to the first step with a cold and a warm image store,
# and images per second delivered to the step beside PyTorch's DataLoader (PIL, torchvision's
# Resize and CenterCrop, 2 workers) over the same files, all in one run.
# Writes its section of docs/benchmarks.md.
# Usage: bench/data_pipeline.sh [images, default 250000] [steps per rate, default 300]
# The images are generated once into $WSCSL_BENCH_DATA (default /var/tmp/wscsl-bench-<images>).
set -euo pipefail
cd "$(dirname "$0")/.."
images=${1:-250000}
steps=${2:-300}
source bench/common.sh
data=${WSCSL_BENCH_DATA:-/var/tmp/wscsl-bench-$images}
batch=64
# Debian's Python, with python3-pil, -torch and -torchvision (scripts/setup.sh installs them).
python=${WSCSL_PYTHON:-/usr/bin/python3}

echo "generating $images JPEGs in $data (once)"
"$python" bench/data_pipeline.py generate "$data" "$images"
jpeg_mib=$(du -sm "$data/images" | cut -f1)
"$python" bench/data_pipeline.py generate "$work/small" 300

# write_pipeline <image folder> <cache folder>: a convnet of width 4 and one stage, so that the
# step does not hide the data path.
write_pipeline() {
  cat <<EOF
[dataset]
type = "image_folder"
root = "$1/images"
attributes = "$1/attributes.csv"
image_size = 112
cache_dir = "$2"
train_triplets = $((steps * batch))
val_triplets = 64
test_triplets = 64

[backbone]
type = "convnet"
width = 4
depth = 1

[condition_module]
type = "discovernet"

[[losses]]
type = "margin"

[trainer]
epochs = 1
batch_size = $batch
validate = false
evaluate_after = false
log_every = $steps
EOF
}
write_pipeline "$work/small" "$work/small_cache" >"$work/small.toml"
write_pipeline "$data" "$work/cache" >"$work/p.toml"

# first_step <pipeline> <label> [train arguments...]: trains to the first step; prints the JSON
# of `peak` (seconds, peak RssAnon of each wscsl process).
first_step() {
  local toml=$1 label=$2
  shift 2
  rm -rf "$work/$label"
  "$python" bench/data_pipeline.py peak "$wscsl" train "$toml" --run-dir "$work/$label" \
    --stop-after-steps 1 "$@"
}
field() {  # field <json> <python expression of j>
  "$python" -c "import json, sys; j = json.loads(sys.argv[1]); print($2)" "$1"
}

first_step "$work/small.toml" small_cold >/dev/null
small=$(first_step "$work/small.toml" small)
echo "300 images, warm store, 1 process: $small"
cold=$(first_step "$work/p.toml" cold)
echo "cold store, 1 process: $cold"
store_mib=$(du -sm "$work/cache" | cut -f1)
warm=$(first_step "$work/p.toml" warm)
echo "warm store, 1 process: $warm"
warm2=$(first_step "$work/p.toml" warm2 --nproc 2)
echo "warm store, 2 processes: $warm2"

# rate <read_ahead>: images per second delivered to the step over $steps steps (warm store).
rate() {
  local it
  it=$(steps_per_second "$work/rate" "" --set trainer.read_ahead="$1")
  awk -v r="$it" -v b="$batch" 'BEGIN { printf "%.0f", r * b * 3 }'
}
pipeline="$work/p.toml"
streamed=$(best_of_three rate true)
echo "wscsl, read ahead: $streamed images/s"
between=$(best_of_three rate false)
echo "wscsl, read between steps: $between images/s"
loader=$("$python" bench/data_pipeline.py dataloader "$data" 112 $((batch * 3)) \
  $((steps / 3 > 20 ? steps / 3 : 20)) 2)
echo "DataLoader, 2 workers: $loader images/s"

small_rss=$(field "$small" "j['rss_anon_mib'][-1]")
cold_rss=$(field "$cold" "j['rss_anon_mib'][-1]")
one_rss=$(field "$warm" "j['rss_anon_mib'][-1]")
two_rss=$(field "$warm2" "max(j['rss_anon_mib'][-2:])")
section=$(
  echo "<!-- data-pipeline: written by bench/data_pipeline.sh $images $steps -->"
  echo "## Data pipeline (\`bench/data_pipeline.sh $images $steps\`)"
  echo
  echo "$images generated JPEGs of 120–200 px ($jpeg_mib MiB) in an \`image_folder\` dataset at 112 px,"
  echo "a convnet of width 4 and one stage (so that the step does not hide the data path),"
  echo "DiscoverNet, batches of $batch triplets; one run on $(nproc) cores ($(date -u +%Y-%m-%d)). The image"
  echo "store holds $store_mib MiB. Private memory is the peak RssAnon of each training process (a"
  echo "store's pages are shared page cache); the same pipeline on 300 images gives what the model,"
  echo "the batches and LibTorch take whatever the dataset. The first step is the whole command"
  echo "\`wscsl train … --stop-after-steps 1\`, start-up and checkpoint included (cold: no store yet,"
  echo "the JPEGs in the page cache). Images per second are 3 × triplets per step × steps per second"
  echo "over $steps steps with a warm store (best of three); PyTorch's DataLoader (Debian's python3-torch"
  echo "and -torchvision: PIL, Resize(112), CenterCrop(112), ToTensor, Normalize, 2 workers,"
  echo "shuffled batches of $((batch * 3)) images) reads the same files, without a model."
  echo
  echo "| measure | value | target |"
  echo "|---|---:|---|"
  echo "| first step, 300 images, warm store | $(field "$small" "j['seconds']") s | |"
  echo "| first step, cold store (decoding every image) | $(field "$cold" "j['seconds']") s | |"
  echo "| first step, warm store | $(field "$warm" "j['seconds']") s | ≤ 5 s |"
  echo "| first step, warm store, 2 processes | $(field "$warm2" "j['seconds']") s | |"
  echo "| private memory, 300 images (model, batches, LibTorch) | $small_rss MiB | |"
  echo "| private memory, cold store (building it) | $cold_rss MiB | |"
  echo "| private memory, warm store | $one_rss MiB ($((one_rss - small_rss)) beyond 300 images) | ≤ 300 MiB beyond |"
  echo "| private memory, 2 processes (the larger) | $two_rss MiB ($(ratio "$two_rss" "$one_rss")× one) | ≤ 1.25× one |"
  echo "| images/s to the step, read ahead (default) | $streamed | |"
  echo "| images/s to the step, read between steps | $between ($(ratio "$between" "$streamed")×) | |"
  echo "| images/s, DataLoader with 2 workers | $loader | |"
  echo "| wscsl ÷ DataLoader | $(ratio "$streamed" "$loader")× | ≥ 3× |"
  echo "<!-- /data-pipeline -->"
)
if ! grep -q "<!-- data-pipeline" docs/benchmarks.md; then
  printf '\n<!-- data-pipeline -->\n<!-- /data-pipeline -->\n' >>docs/benchmarks.md
fi
replace_section docs/benchmarks.md data-pipeline "$section"
echo "wrote docs/benchmarks.md"
