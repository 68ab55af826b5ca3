// The dataset's attribute values of each image it knows, by the label an index gives the image:
// what lets `wscsl explore` show an image's attributes and frame a neighbour by whether it shares
// the query's value of a condition.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "wscsl/plugin/dataset.hpp"

namespace wscsl::host::search {

// Image name (its canonical file where the dataset names its files, else "<split>/<id>" as
// IndexedImage::label spells it) → its value of each of the dataset's conditions, in
// DatasetInfo::conditions' order ("" where unknown).
using ImageAttributes = std::unordered_map<std::string, std::vector<std::string>>;

struct DatasetImages {
  ImageAttributes attributes;
  // "<split>/<id>" (an image of an index made with `--split`) → its canonical file, for the
  // members of every split whose files the dataset names: the name it has in `attributes`, and
  // the one an index of the dataset's folder gives it.
  std::unordered_map<std::string, std::string> files;
};

// Every split's attributes and files (Dataset::attributes), the values by name (a measurement as
// a number); empty for a dataset that offers none.
DatasetImages dataset_images(Dataset& dataset);

}  // namespace wscsl::host::search
