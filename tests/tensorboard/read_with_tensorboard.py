"""Loads wscsl's event files with TensorBoard's own reader (its EventAccumulator and EventMultiplexer,
and the HParams plugin's metadata parser) and checks what a user sees in TensorBoard, as
docs/evaluation.md ("TensorBoard") promises: the training scalars over steps, the epoch scalars and
a validation metric per epoch, the test metrics, curves.png under Images, and the run's
hyperparameters as an HParams session. For a python3 with PyPI's tensorboard (the pip leg of CI,
the GPU machines); Debian has no TensorBoard, so the Debian legs read the files with
read_events.py instead.

  read_with_tensorboard.py run RUN --epochs E --steps S --loss-term LOSS/TERM
      one run: every tag of the table, the loss, its term and the learning rate at each of the S
      steps, epoch/* and val/* once per epoch, test/* once, plots/curves a PNG, the
      hyperparameters with trainer.lr, dataset.type and trainer.seed
  read_with_tensorboard.py suite DIR --methods M1,M2,... --seeds N1,N2,...
      a bench suite as `tensorboard --logdir DIR` shows it: one run per <method>/seed-<seed>, each
      with its training, test scalars and curves; the seeds of a method share one HParams session
      group, and the methods' groups differ
"""
import argparse
import os
import struct
import sys

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing import event_multiplexer
from tensorboard.plugins.hparams import metadata as hparams_metadata

EVERYTHING = {
    event_accumulator.SCALARS: 0,
    event_accumulator.IMAGES: 0,
    event_accumulator.TENSORS: 0,
}
TRAINING_TAGS = ("train/loss", "train/lr")
# Logged with the training points whenever the clock moved since the previous one.
SPEED_TAGS = ("train/steps_per_s", "train/triplets_per_s")
EPOCH_TAGS = ("epoch/number", "epoch/loss", "epoch/lr", "epoch/seconds", "epoch/data_seconds")


def fail(message):
    sys.exit(f"read_with_tensorboard: {message}")


def session_start(accumulator, name):
    content = accumulator.PluginTagToContent(hparams_metadata.PLUGIN_NAME)
    start = content.get(hparams_metadata.SESSION_START_INFO_TAG)
    if start is None:
        fail(f"TensorBoard's HParams plugin finds no session start in {name}")
    info = hparams_metadata.parse_session_start_info_plugin_data(start)
    for key in ("trainer.lr", "dataset.type", "trainer.seed"):
        if key not in info.hparams:
            fail(f"the hyperparameters of {name} lack {key}: {sorted(info.hparams)}")
    return info


def check_curves(accumulator, name):
    if "plots/curves" not in accumulator.Tags()["images"]:
        fail(f"TensorBoard reads no plots/curves picture in {name}")
    curves = accumulator.Images("plots/curves")[-1]
    png = curves.encoded_image_string
    if png[:8] != b"\x89PNG\r\n\x1a\n" or struct.unpack(">II", png[16:24]) != (
        curves.width,
        curves.height,
    ):
        fail(f"plots/curves of {name} is not the PNG its size says")


def check_run(accumulator, name, epochs, steps, loss_term):
    scalars = accumulator.Tags()["scalars"]
    for tag in TRAINING_TAGS + (f"train/loss/{loss_term}",):
        points = [e.step for e in accumulator.Scalars(tag)] if tag in scalars else []
        if points != list(range(1, steps + 1)):
            fail(f"{tag} of {name} is at steps {points}, not at each of 1..{steps}")
    for tag in SPEED_TAGS:
        points = [e.step for e in accumulator.Scalars(tag)] if tag in scalars else []
        if not points or not set(points) <= set(range(1, steps + 1)):
            fail(f"{tag} of {name} is at steps {points}, not at training steps 1..{steps}")
    validation = [t for t in scalars if t.startswith("val/")]
    if not validation:
        fail(f"TensorBoard reads no validation metric in {name}")
    for tag in EPOCH_TAGS + tuple(validation):
        if tag not in scalars or len(accumulator.Scalars(tag)) != epochs:
            fail(f"{tag} of {name} is not there once for each of {epochs} epochs")
    numbers = [e.value for e in accumulator.Scalars("epoch/number")]
    if numbers != list(range(1, epochs + 1)):
        fail(f"epoch/number of {name} reads {numbers}")
    test = [t for t in scalars if t.startswith("test/")]
    if not test or any(len(accumulator.Scalars(t)) != 1 for t in test):
        fail(f"the test metrics of {name} are not there once each: {test}")
    check_curves(accumulator, name)
    info = session_start(accumulator, name)
    return len(scalars), len(validation), len(test), len(info.hparams)


def run_command(args):
    accumulator = event_accumulator.EventAccumulator(args.run, size_guidance=EVERYTHING)
    accumulator.Reload()
    tags, validation, test, hparams = check_run(
        accumulator, args.run, args.epochs, args.steps, args.loss_term
    )
    print(
        f"TensorBoard read {tags} scalar tags ({args.steps} training steps, {validation} "
        f"validation and {test} test metrics), {len(accumulator.Tags()['images'])} picture(s), "
        f"{hparams} hyperparameters"
    )


def suite_command(args):
    methods = args.methods.split(",")
    seeds = args.seeds.split(",")
    expected = {f"{m}/seed-{s}" for m in methods for s in seeds}
    multiplexer = event_multiplexer.EventMultiplexer(size_guidance=EVERYTHING)
    multiplexer.AddRunsFromDirectory(args.dir)
    multiplexer.Reload()
    runs = set(multiplexer.Runs())
    if runs != expected:
        fail(f"TensorBoard finds the runs {sorted(runs)} in {args.dir}, not {sorted(expected)}")
    groups = {}
    for run in sorted(runs):
        accumulator = multiplexer.GetAccumulator(run)
        scalars = accumulator.Tags()["scalars"]
        for tag in ("train/loss", "epoch/loss"):
            if tag not in scalars or not accumulator.Scalars(tag):
                fail(f"TensorBoard reads no {tag} in {run}")
        if not any(t.startswith("test/") for t in scalars):
            fail(f"TensorBoard reads no test metric in {run}")
        check_curves(accumulator, run)
        info = session_start(accumulator, run)
        seed = info.hparams["trainer.seed"].number_value
        if f"seed-{seed:g}" != os.path.basename(run):
            fail(f"{run} records trainer.seed = {seed:g}")
        groups.setdefault(run.split("/")[0], set()).add(info.group_name)
    for method, names in groups.items():
        if len(names) != 1 or not next(iter(names)):
            fail(f"the seeds of {method} are in the HParams session groups {sorted(names)}, not one")
    if len({next(iter(names)) for names in groups.values()}) != len(methods):
        fail(f"the methods share HParams session groups: {groups}")
    print(
        f"TensorBoard read {len(runs)} runs of {len(methods)} methods, "
        f"one HParams session group per method"
    )


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run")
    run.add_argument("run")
    run.add_argument("--epochs", type=int, required=True)
    run.add_argument("--steps", type=int, required=True)
    run.add_argument("--loss-term", required=True)
    run.set_defaults(handler=run_command)
    suite = commands.add_parser("suite")
    suite.add_argument("dir")
    suite.add_argument("--methods", required=True)
    suite.add_argument("--seeds", required=True)
    suite.set_defaults(handler=suite_command)
    args = parser.parse_args()
    args.handler(args)


if __name__ == "__main__":
    main()
