#!/usr/bin/env bash
# The data pipeline on a folder of generated JPEGs (image_folder, 112 px): private memory
# (peak RssAnon) of 1 and 2 processes, time to the first step with a cold and a warm image store,
# and images per second delivered to the step beside PyTorch's DataLoader (PIL, torchvision's
# Resize and CenterCrop, 2 workers) over the same files, all in one run; then training steps with
# and without reading the next batch ahead.
# Writes its section of docs/benchmarks.md.
# Usage: bench/data_pipeline.sh [images, default 250000] [steps per rate, default 300]
# The images are generated once into $WSCSL_BENCH_DATA (default /var/tmp/wscsl-bench-<images>).
set -euo pipefail
cd "$(dirname "$0")/.."
images=${1:-250000}
steps=${2:-300}
source bench/common.sh
scripts/build.sh --target wscsl_read_batches >/dev/null
data=${WSCSL_BENCH_DATA:-/var/tmp/wscsl-bench-$images}
batch=64
# Debian's Python, with python3-pil, -torch and -torchvision (scripts/setup.sh installs them).
python=${WSCSL_PYTHON:-/usr/bin/python3}

echo "generating $images JPEGs in $data (once)"
"$python" bench/data_pipeline.py generate "$data" "$images"
jpeg_mib=$(du -sm "$data/images" | cut -f1)
"$python" bench/data_pipeline.py generate "$work/small_images" 300

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
write_pipeline "$work/small_images" "$work/small_cache" >"$work/small.toml"
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

# The data path alone: the batches of an epoch read, flipped and normalised, without a step.
sed -n '/^\[dataset\]/,/^$/p' "$work/p.toml" | grep -v '^\[dataset\]\|^type' >"$work/dataset.toml"
read_batches() {
  WSCSL_PLUGIN_PATH=$PWD/build/plugins build/bin/wscsl_read_batches image_folder \
    "$work/dataset.toml" "$steps" "$batch"
}
delivered=$(best_of_three read_batches)
echo "wscsl, data path alone: $delivered images/s"
loader=$("$python" bench/data_pipeline.py dataloader "$data" 112 $((batch * 3)) \
  $((steps / 3 > 20 ? steps / 3 : 20)) 2)
echo "DataLoader, 2 workers: $loader images/s"

# trained <read_ahead>: images per second through training steps ($steps / 10 of them).
trained() {
  local it
  it=$(steps=$((steps / 10)) steps_per_second "$work/rate" "" --set trainer.read_ahead="$1")
  awk -v r="$it" -v b="$batch" 'BEGIN { printf "%.0f", r * b * 3 }'
}
pipeline="$work/p.toml"
streamed=$(best_of_three trained true)
echo "training, read ahead: $streamed images/s"
between=$(best_of_three trained false)
echo "training, read between steps: $between images/s"

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
  echo "the JPEGs in the page cache). Images per second delivered: the batches of $steps steps of a"
  echo "shuffled epoch read from the warm store, flipped and normalised as the trainer reads them,"
  echo "without a step, on one thread (\`build/bin/wscsl_read_batches\`, best of three); PyTorch's"
  echo "DataLoader (Debian's python3-torch and -torchvision: PIL, Resize(112), CenterCrop(112),"
  echo "ToTensor, Normalize, 2 worker processes, shuffled batches of $((batch * 3)) images) over the same"
  echo "files, also without a model. Training rates: $((steps / 10)) steps with the next batch read on a"
  echo "background thread (the default) and read between steps (\`trainer.read_ahead = false\`), best"
  echo "of three."
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
  echo "| images/s delivered, wscsl (1 thread) | $delivered | |"
  echo "| images/s delivered, DataLoader (2 workers) | $loader | |"
  echo "| wscsl ÷ DataLoader | $(ratio "$delivered" "$loader")× | ≥ 3× |"
  echo "| images/s through training steps, read ahead (default) | $streamed | |"
  echo "| images/s through training steps, read between steps | $between ($(ratio "$between" "$streamed")×) | |"
  echo "<!-- /data-pipeline -->"
)
if ! grep -q "<!-- data-pipeline" docs/benchmarks.md; then
  printf '\n<!-- data-pipeline -->\n<!-- /data-pipeline -->\n' >>docs/benchmarks.md
fi
replace_section docs/benchmarks.md data-pipeline "$section"
echo "wrote docs/benchmarks.md"
