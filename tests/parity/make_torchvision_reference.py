#!/usr/bin/python3
"""Writes what the torchvision parity test compares wscsl against, computed by Debian's
python3-torch, python3-torchvision and python3-pil (the libraries researchers use):

  resnet18.pt            torchvision's resnet18() (seeded, batch norm statistics randomised) as a
                         plain dict, plus an fc_embed Linear(256, 64): loaded whole by the trunk
  resnet18_ordered.pt    the same network's model.state_dict() as torch.save writes it (an
                         OrderedDict, no fc_embed), and resnet18_legacy.pt in PyTorch's pre-1.6
                         format; resnet18_converted.pt and resnet18_legacy_converted.pt are them
                         after scripts/convert-weights.py
  trunk_reference.pt     {"images": [4,3,112,112], "features": layer3 → AvgPool2d(7) [4,256],
                         "phi": fc_embed(features) [4,64]}, in eval mode
  resnet50.pt            torchvision's resnet50() (seeded, batch norm statistics randomised) as
                         scripts/convert-weights.py writes it, layer4 and fc included
  resnet50_reference.pt  {"images": [2,3,64,64], "layer3": [2,1024,4,4], "layer4": [2,2048,2,2]},
                         the maps after layer3 and layer4 in eval mode
  images/*               8 JPEG and PNG files of different sizes and modes, made of Fashion-MNIST
                         photographs (Debian's dataset-fashion-mnist)
  images_reference.pt    {file name: Image.open(f).convert("RGB") → Resize(112) → CenterCrop(112),
                         as uint8 [3,112,112]}

Usage: make_torchvision_reference.py OUT_DIR
"""
import gzip
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torchvision
    from PIL import Image
    from torchvision import transforms
except ImportError as e:
    sys.exit(f"the parity test needs Debian's python3-torch, python3-torchvision and python3-pil "
             f"({e}): run scripts/setup.sh")

FASHION_MNIST = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
CONVERT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                       "convert-weights.py")


def randomise_batch_norm(model):
    with torch.no_grad():  # non-trivial batch norm, as a trained network has
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.3, 0.3)
                m.running_var.uniform_(0.5, 2.0)


def write_networks(out):
    torch.manual_seed(0)
    model = torchvision.models.resnet18()
    randomise_batch_norm(model)
    fc_embed = torch.nn.Linear(256, 64)
    model.eval()

    torch.save(model.state_dict(), os.path.join(out, "resnet18_ordered.pt"))
    torch.save(model.state_dict(), os.path.join(out, "resnet18_legacy.pt"),
               _use_new_zipfile_serialization=False)
    whole = dict(model.state_dict())
    whole.update({"fc_embed." + k: v for k, v in fc_embed.state_dict().items()})
    torch.save(whole, os.path.join(out, "resnet18.pt"))
    for name in ("resnet18_ordered", "resnet18_legacy"):
        converted = name.replace("_ordered", "") + "_converted.pt"
        subprocess.run([sys.executable, CONVERT, os.path.join(out, name + ".pt"),
                        os.path.join(out, converted)], check=True)

    images = torch.randn(4, 3, 112, 112, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        x = model.maxpool(model.relu(model.bn1(model.conv1(images))))
        x = model.layer3(model.layer2(model.layer1(x)))
        features = torch.nn.functional.avg_pool2d(x, 7).flatten(1)
        phi = fc_embed(features)
    torch.save({"images": images, "features": features, "phi": phi},
               os.path.join(out, "trunk_reference.pt"))


def write_resnet50(out):
    torch.manual_seed(2)
    model = torchvision.models.resnet50()
    randomise_batch_norm(model)
    model.eval()
    torch.save(model.state_dict(), os.path.join(out, "resnet50_ordered.pt"))
    subprocess.run([sys.executable, CONVERT, os.path.join(out, "resnet50_ordered.pt"),
                    os.path.join(out, "resnet50.pt")], check=True)
    os.remove(os.path.join(out, "resnet50_ordered.pt"))
    images = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        x = model.maxpool(model.relu(model.bn1(model.conv1(images))))
        layer3 = model.layer3(model.layer2(model.layer1(x)))
        layer4 = model.layer4(layer3)
    torch.save({"images": images, "layer3": layer3, "layer4": layer4},
               os.path.join(out, "resnet50_reference.pt"))


def fashion_mnist(count):
    with gzip.open(FASHION_MNIST, "rb") as f:
        data = f.read()
    return np.frombuffer(data, dtype=np.uint8, offset=16)[: count * 784].reshape(count, 28, 28)


def mosaic(items, width, height, tile, first):
    """A width × height RGB picture tiled with photographs, each channel a different one."""
    picture = np.zeros((height, width, 3), dtype=np.uint8)
    n = first
    for y in range(0, height, tile):
        for x in range(0, width, tile):
            for c in range(3):
                photo = Image.fromarray(items[n % len(items)]).resize((tile, tile), Image.BILINEAR)
                block = np.asarray(photo)[: height - y, : width - x]
                picture[y:y + block.shape[0], x:x + block.shape[1], c] = block
                n += 1
    return Image.fromarray(picture, "RGB")


def write_images(out):
    items = fashion_mnist(200)
    folder = os.path.join(out, "images")
    os.makedirs(folder, exist_ok=True)
    # (file, width, height, tile, mode, save options): UT-Zappos' and Celeb-A's sizes, up- and
    # downsampling, an exact 112, both JPEG subsamplings, progressive, gray, alpha and palette.
    specs = [
        ("zappos.jpg", 136, 102, 34, "RGB", {"quality": 90}),
        ("celeba.jpg", 178, 218, 44, "RGB", {"quality": 95, "subsampling": 0, "progressive": True}),
        ("gray.jpg", 300, 97, 50, "L", {"quality": 85}),
        ("photo.png", 640, 480, 80, "RGB", {}),
        ("alpha.png", 113, 150, 30, "RGBA", {}),
        ("palette.png", 250, 90, 45, "P", {}),
        ("gray_alpha.png", 112, 112, 28, "LA", {}),
        ("gray.png", 97, 131, 33, "L", {}),
    ]
    pipeline = transforms.Compose([transforms.Resize(112), transforms.CenterCrop(112)])
    expected = {}
    for i, (name, width, height, tile, mode, options) in enumerate(specs):
        picture = mosaic(items, width, height, tile, first=17 * i)
        if mode == "RGBA":
            alpha = Image.fromarray(items[i % len(items)]).resize((width, height))
            picture = picture.convert("RGBA")
            picture.putalpha(alpha)
        elif mode == "P":
            picture = picture.quantize(colors=64)
        elif mode != "RGB":
            picture = picture.convert(mode)
        path = os.path.join(folder, name)
        picture.save(path, **options)
        with Image.open(path) as decoded:
            assert decoded.mode == mode, (name, decoded.mode)
            result = pipeline(decoded.convert("RGB"))
        expected[name] = torch.from_numpy(np.array(result)).permute(2, 0, 1).contiguous()
    torch.save(expected, os.path.join(out, "images_reference.pt"))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_torchvision_reference.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_networks(out)
    write_resnet50(out)
    write_images(out)


if __name__ == "__main__":
    main()
