// The dataset's attribute values of each image it knows, by the label an index gives the image:
// what lets `wscsl explore` show an image's attributes and frame a neighbour by whether it shares
// the query's value of a condition.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "wscsl/plugin/dataset.hpp"

namespace wscsl::host::search {

class IndexSearcher;

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

// What the rows of an index are called and what the run's dataset knows of them, for `wscsl
// search` and `wscsl explore` alike: a row of an index made with `--split` is named by the file the
// dataset gives it, as a row of an index of the dataset's folder is, and has its attributes.
class RowNames {
 public:
  // Reads the dataset's attributes and files (dataset_images) of the searcher's run.
  explicit RowNames(IndexSearcher& searcher);

  // The row's file (an image of a split: the dataset's file for it, where the dataset names its
  // files), else "<split>/<id>".
  std::string label(std::int64_t row);
  // The dataset's value of each of its conditions (conditions()' order, "" where unknown) for
  // the image `label` names, or null where the dataset does not know the image.
  const std::vector<std::string>* attributes(const std::string& label) const;
  // "color=red size=10": the known values of `attributes`, in conditions()' order.
  std::string attribute_text(const std::vector<std::string>* attributes) const;
  // {condition: value} of the known values of `attributes`.
  nlohmann::json attributes_json(const std::vector<std::string>* attributes) const;
  const std::vector<std::string>& conditions() const { return conditions_; }
  // Whether the dataset knows the attributes of any image.
  bool any_attributes() const { return !dataset_.attributes.empty(); }

 private:
  IndexSearcher& searcher_;
  std::vector<std::string> conditions_;
  DatasetImages dataset_;
};

}  // namespace wscsl::host::search
