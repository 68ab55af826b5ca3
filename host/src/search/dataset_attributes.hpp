// The dataset's attribute values of each image it knows, by the label an index gives the image:
// what lets `wscsl explore` show an image's attributes and frame a neighbour by whether it shares
// the query's value of a condition.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "wscsl/plugin/dataset.hpp"

namespace wscsl::host::search {

// Image label (a canonical file, or "<split>/<id>" as IndexedImage::label spells it) → its value
// of each of the dataset's conditions, in DatasetInfo::conditions' order ("" where unknown).
using ImageAttributes = std::unordered_map<std::string, std::vector<std::string>>;

// Every split's attributes (Dataset::attributes), the values by name (a measurement as a
// number); empty for a dataset that offers none.
ImageAttributes attributes_by_image(Dataset& dataset);

}  // namespace wscsl::host::search
