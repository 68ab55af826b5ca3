"""Loads a wscsl run's event files with TensorBoard's own reader (its EventAccumulator and the
HParams plugin's metadata parser) and checks what a user would see: the training loss and learning
rate over steps, a validation metric per epoch, the test metrics, curves.png under Images, and the
run's hyperparameters. For a machine where TensorBoard is installed (the GPU machines); Debian has
no TensorBoard, so CI reads the files with read_events.py instead.

  read_with_tensorboard.py RUN [--epochs E]
"""
import argparse
import struct
import sys

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.plugins.hparams import metadata as hparams_metadata


def fail(message):
    sys.exit(f"read_with_tensorboard: {message}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--epochs", type=int, default=None)
    args = parser.parse_args()
    everything = {
        event_accumulator.SCALARS: 0,
        event_accumulator.IMAGES: 0,
        event_accumulator.TENSORS: 0,
    }
    acc = event_accumulator.EventAccumulator(args.run, size_guidance=everything)
    acc.Reload()
    scalars = acc.Tags()["scalars"]
    for tag in ("train/loss", "train/lr"):
        if tag not in scalars or not acc.Scalars(tag):
            fail(f"TensorBoard reads no {tag} in {args.run}")
    steps = [e.step for e in acc.Scalars("train/loss")]
    if steps != sorted(set(steps)):
        fail(f"train/loss is at steps {steps}: not one point per step")
    validation = [t for t in scalars if t.startswith("val/")]
    if not validation:
        fail("TensorBoard reads no validation metric")
    if args.epochs is not None and any(len(acc.Scalars(t)) != args.epochs for t in validation):
        fail(f"the validation metrics are not there once for each of {args.epochs} epochs")
    if not any(t.startswith("test/") for t in scalars):
        fail("TensorBoard reads no test metric")
    if "plots/curves" not in acc.Tags()["images"]:
        fail("TensorBoard reads no plots/curves picture")
    curves = acc.Images("plots/curves")[-1]
    png = curves.encoded_image_string
    if png[:8] != b"\x89PNG\r\n\x1a\n" or struct.unpack(">II", png[16:24]) != (
        curves.width,
        curves.height,
    ):
        fail("plots/curves is not the PNG its size says")
    content = acc.PluginTagToContent(hparams_metadata.PLUGIN_NAME)
    start = content.get(hparams_metadata.SESSION_START_INFO_TAG)
    if start is None:
        fail("TensorBoard's HParams plugin finds no session start")
    hparams = hparams_metadata.parse_session_start_info_plugin_data(start).hparams
    if "trainer.lr" not in hparams or "dataset.type" not in hparams:
        fail(f"the session's hyperparameters lack trainer.lr or dataset.type: {sorted(hparams)}")
    print(
        f"TensorBoard read {len(scalars)} scalar tags ({len(steps)} training points, "
        f"{len(validation)} validation metrics), {len(acc.Tags()['images'])} picture(s), "
        f"{len(hparams)} hyperparameters"
    )


if __name__ == "__main__":
    main()
