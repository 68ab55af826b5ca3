// Any folder of images with a CSV of per-image attributes (one column per condition, a column
// naming each image's file and one naming its split). Triplets are drawn from the attributes, or
// read from a directory in CSN's layout (what `wscsl make-triplets` writes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/labelled_images.hpp"
#include "wscsl/sdk.hpp"

namespace wscsl::image_folder {

struct ImageFolderOptions : ImageDatasetOptions {
  // Not an aggregate: GCC 12 misreads `Options{}` of an aggregate with a base as uninitialized.
  ImageFolderOptions() {}

  std::string root;
  std::string attributes;
  std::string file_column = "file";
  std::string split_column = "split";
  std::vector<std::string> conditions;
  std::vector<std::string> numeric;
  double close_within = 0.0;
  double far_beyond = 0.0;
  std::string triplets;
  std::int64_t seed = 0;
  std::int64_t train_triplets = 10000;
  std::int64_t val_triplets = 2000;
  std::int64_t test_triplets = 4000;
};

class ImageFolder final : public ImageDataset {
 public:
  using Options = ImageFolderOptions;
  static Schema<Options> schema();
  static Contract contract_of(const Options& options);
  explicit ImageFolder(const Options& options);

  DatasetInfo info() const override;

 protected:
  ImageList read_image_list(BadRows& bad) override;
  SplitData read_split(Split split, const ImageList& images, BadRows& bad) override;
  std::optional<SplitAttributes> load_attributes(Split split) override;

 private:
  // Triplets of `split` from the CSN-layout directory `triplets`, mapped onto this dataset's ids
  // through the file names of its filenames.json.
  SplitData read_triplet_files(Split split, const ImageList& images, BadRows& bad);

  Options options_;
  std::vector<std::string> conditions_;  // the chosen attribute columns
  LabelledImages labelled_;
};

}  // namespace wscsl::image_folder
