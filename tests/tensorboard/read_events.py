"""Reads wscsl's TensorBoard event files independently of wscsl's own code: TFRecord framing with
every CRC-32C checked (Debian's python3-crc32c, else TensorBoard's own masked CRC-32C where
TensorBoard is installed without it, as on the GPU machines), Event messages decoded by
python3-protobuf with the message definitions compiled by protoc.

  read_events.py PROTO_DIR check RUN --steps S --epochs E --log-every K [--pictures P]
                 [--only-term LOSS/TERM]
      the run logged the training scalars at every K-th step up to S, the metrics of epochs 1..E,
      the test metrics, curves.png (and --pictures P pictures in all) and its hyperparameters; no
      (tag, step) twice
  read_events.py PROTO_DIR same RUN_A RUN_B
      both runs logged the same values at the same steps (all but the speed and the time)
  read_events.py PROTO_DIR none RUN
      the run has no event file
  read_events.py PROTO_DIR tags RUN
      prints every tag the run logged, one a line with its kind (scalar or picture), sorted
"""
import argparse
import collections
import os
import struct
import sys

try:
    import crc32c

    def masked_crc32c(data):
        crc = crc32c.crc32c(data)
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

except ImportError:
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

TIME_DEPENDENT = {"train/steps_per_s", "train/triplets_per_s", "epoch/seconds",
                  "epoch/data_seconds"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fail(message):
    sys.exit(f"read_events: {message}")


def records(path):
    data = open(path, "rb").read()
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            fail(f"{path}: a record header is cut short at byte {at}")
        header = data[at : at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8 : at + 12])
        if masked_crc32c(header) != length_crc:
            fail(f"{path}: the length at byte {at} fails its CRC-32C")
        payload = data[at + 12 : at + 12 + length]
        if len(payload) != length or len(data) < at + 16 + length:
            fail(f"{path}: the record at byte {at} is cut short")
        (data_crc,) = struct.unpack("<I", data[at + 12 + length : at + 16 + length])
        if masked_crc32c(payload) != data_crc:
            fail(f"{path}: the record at byte {at} fails its data's CRC-32C")
        yield payload
        at += 16 + length


def event_files(run):
    names = sorted(n for n in os.listdir(run) if n.startswith("events.out.tfevents."))
    return [os.path.join(run, n) for n in names]


class Run:
    def __init__(self, pb, path):
        self.files = event_files(path)
        if not self.files:
            fail(f"{path} has no event file")
        self.scalars = {}  # (tag, step) -> value
        self.images = []
        self.session_starts = []
        self.session_ends = []
        for file in self.files:
            events = []
            for payload in records(file):
                event = pb.Event()
                event.ParseFromString(payload)
                events.append(event)
            if not events or events[0].file_version != "brain.Event:2":
                fail(f"{file} does not begin with the file version brain.Event:2")
            for event in events[1:]:
                self.read(event, pb, file)

    def read(self, event, pb, file):
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if value.metadata.plugin_data.plugin_name == "hparams":
                data = pb.HParamsPluginData()
                data.ParseFromString(value.metadata.plugin_data.content)
                if data.HasField("session_start_info"):
                    self.session_starts.append(data.session_start_info)
                elif data.HasField("session_end_info"):
                    self.session_ends.append(data.session_end_info)
                else:
                    fail(f"{file}: an hparams summary with neither start nor end")
            elif kind == "simple_value":
                key = (value.tag, event.step)
                if key in self.scalars:
                    fail(f"{file}: {value.tag} at step {event.step} was logged twice")
                self.scalars[key] = value.simple_value
            elif kind == "image":
                self.images.append((value.tag, value.image))
            else:
                fail(f"{file}: a value of tag {value.tag} holds neither a number nor a picture")

    def steps(self, tag):
        return sorted(step for (t, step) in self.scalars if t == tag)

    def tags(self, prefix):
        return sorted({t for (t, _) in self.scalars if t.startswith(prefix)})


def check(run, args):
    logged = list(range(args.log_every, args.steps + 1, args.log_every))
    for tag in ("train/loss", "train/lr"):
        if run.steps(tag) != logged:
            fail(f"{tag} is at steps {run.steps(tag)}, expected {logged}")
    terms = run.tags("train/loss/")
    if not terms or any(run.steps(t) != logged for t in terms):
        fail(f"the loss terms {terms} are not at every logged step")
    if args.only_term:
        term = "train/loss/" + args.only_term
        if any(run.scalars[(term, s)] != run.scalars[("train/loss", s)] for s in logged):
            fail(f"{term} differs from train/loss, whose only term it is")
    epochs = sorted(v for (t, _), v in run.scalars.items() if t == "epoch/number")
    if epochs != list(range(1, args.epochs + 1)):
        fail(f"epoch/number holds {epochs}, expected 1..{args.epochs}")
    validation = run.tags("val/")
    if not validation or any(len(run.steps(t)) != args.epochs for t in validation):
        fail(f"the validation metrics {validation} are not there once per epoch")
    if not run.tags("test/"):
        fail("no test metric")
    pictures = sorted(tag for tag, _ in run.images)
    if "plots/curves" not in pictures or len(pictures) != args.pictures:
        fail(f"the pictures are {pictures}, expected plots/curves and {args.pictures} in all")
    for tag, image in run.images:
        png = image.encoded_image_string
        width, height = struct.unpack(">II", png[16:24])
        if not png.startswith(PNG_SIGNATURE) or (width, height) != (image.width, image.height):
            fail(f"{tag} is not the PNG its size says")
    if len(run.session_starts) != len(run.files):
        fail(f"{len(run.session_starts)} session starts in {len(run.files)} files")
    hparams = run.session_starts[0].hparams
    if hparams["trainer.log_every"].number_value != args.log_every or not hparams[
        "dataset.type"
    ].string_value:
        fail("the hyperparameters lack trainer.log_every or dataset.type")
    if [end.status for end in run.session_ends] != [1]:
        fail(f"session end statuses {[e.status for e in run.session_ends]}, expected one success")
    print(
        f"{len(run.files)} event file(s): {len(run.scalars)} scalars "
        f"({len(terms)} loss terms, {len(validation)} validation metrics), "
        f"{len(run.images)} picture(s), {len(hparams)} hyperparameters"
    )


def same(a, b):
    def deterministic(run):
        return {k: v for k, v in run.scalars.items() if k[0] not in TIME_DEPENDENT}

    da, db = deterministic(a), deterministic(b)
    if da != db:
        differing = sorted(k for k in da.keys() | db.keys() if da.get(k) != db.get(k))
        fail(f"the runs differ at {len(differing)} (tag, step), first {differing[:5]}")
    print(f"the same {len(da)} scalars")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("proto_dir")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("run")
    c.add_argument("--steps", type=int, required=True)
    c.add_argument("--epochs", type=int, required=True)
    c.add_argument("--log-every", type=int, required=True)
    c.add_argument("--pictures", type=int, default=1)
    c.add_argument("--only-term", help="the loss's one term, of weight 1: equal to the loss")
    s = sub.add_parser("same")
    s.add_argument("run_a")
    s.add_argument("run_b")
    n = sub.add_parser("none")
    n.add_argument("run")
    t = sub.add_parser("tags")
    t.add_argument("run")
    args = parser.parse_args()
    sys.path.insert(0, args.proto_dir)
    import tensorboard_events_pb2 as pb

    if args.command == "check":
        check(Run(pb, args.run), args)
    elif args.command == "same":
        same(Run(pb, args.run_a), Run(pb, args.run_b))
    elif args.command == "tags":
        run = Run(pb, args.run)
        for tag in sorted({t for (t, _) in run.scalars}):
            print(f"{tag}\tscalar")
        for tag in sorted({t for (t, _) in run.images}):
            print(f"{tag}\tpicture")
    elif event_files(args.run):
        fail(f"{args.run} has event files: {event_files(args.run)}")


if __name__ == "__main__":
    main()
