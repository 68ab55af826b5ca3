# Sourced by bench/scaling.sh and scripts/gpu_run.sh: the ResNet-18 pipeline both measure.
# resnet18_crb_pipeline <export dir>: prints a pipeline that trains a ResNet-18 trunk (112 px,
# random initialisation) with DiscoverNet and the margin loss on the Fashion-CRB images and labels
# that `wscsl export` wrote to <export dir>, upscaled; its triplets are drawn from the labels by
# the rule of the benchmark's. Batches of 64 triplets; the rest is set with --set.
resnet18_crb_pipeline() {
  cat <<TOML
[dataset]
type = "image_folder"
root = "$1/images"
attributes = "$1/attributes.csv"
conditions = ["category", "color", "rotation", "background"]
image_size = 112

[backbone]
type = "resnet18_trunk"
embedding_dim = 64

[condition_module]
type = "discovernet"

[[losses]]
type = "margin"

[trainer]
batch_size = 64
TOML
}
