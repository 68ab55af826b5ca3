// The shared half of the outfit datasets (Polyvore Outfits, Maryland Polyvore): a concrete layout
// reads its files into an OutfitCatalog (the images, their types, each split's outfits and the
// files of its two tasks); this class turns it into SplitData — training triplets drawn from the
// outfits (outfit_triplets.hpp), afresh every epoch; the compatibility lines and the
// fill-in-the-blank questions; the item types and the type-pair conditions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "wscsl/data/image_dataset.hpp"
#include "wscsl/data/item_text.hpp"
#include "wscsl/data/outfit_files.hpp"
#include "wscsl/data/outfit_triplets.hpp"
#include "wscsl/data/outfit_types.hpp"

namespace wscsl {

struct OutfitDatasetOptions : ImageDatasetOptions {
  std::vector<std::string> held_out_types;
};

template <class O>
void add_outfit_options(Schema<O>& s) {
  s.field("held_out_types",
          static_cast<std::vector<std::string> O::*>(&OutfitDatasetOptions::held_out_types),
          "Item types whose items are removed from the training outfits only (SCE-Net's unseen "
          "categories, Table 3: [\"scarves\", \"accessories\"]); an outfit left with fewer than 2 "
          "items gives no triplet. Validation and test keep them.");
  add_image_options(s);
}

// How the right candidate of a fill-in-the-blank question is known.
enum class BlankAnswer {
  SameOutfit,  // the candidate of the first question item's outfit (set_id), as Vasileva's loader
  First,       // answers[0], as Han's fill_in_blank.py
};

// An item of a split file, by the name "<set_id>_<index>" that lines and questions use.
struct OutfitItemRef {
  std::int64_t image = 0;
  std::int64_t outfit = 0;  // its outfit in the split file
};

struct OutfitSplitSource {
  std::filesystem::path file;                      // the split file (for messages)
  bool read = false;                               // whether it could be read
  std::vector<std::vector<std::int64_t>> outfits;  // image ids, in file order
  std::unordered_map<std::string, OutfitItemRef> items;
  std::filesystem::path compatibility;  // empty: the split has no compatibility lines
  std::filesystem::path blanks;         // empty: the split has no questions
  BlankAnswer answer = BlankAnswer::SameOutfit;
};

struct OutfitCatalog {
  ImageList images;
  std::vector<std::int64_t> item_types;  // by image id, an index of the type spaces
  // By image id (item_text.hpp): the text key ("" = none) and the category label, the texts of
  // kTitleField and kCategoryField.
  std::vector<std::string> titles, categories;
  std::map<Split, OutfitSplitSource> splits;  // train, val, test
};

// The images and outfits of the three split files of a layout, every item of them one image
// (Polyvore Outfits: one per item_id, images/<item_id>.jpg; Maryland: one per <set_id>_<index>,
// images/<set_id>/<index>.jpg). `listed_by[image]` says where an image is first listed and
// `entries[image]` is that entry, for a layout to type its images. A split file that cannot be read
// is a problem of `problems`, its split left without outfits.
struct OutfitImages {
  OutfitCatalog catalog;  // item_types not yet filled in
  std::vector<std::string> listed_by;
  std::vector<OutfitEntry> entries;
};
OutfitImages outfit_images(const std::map<Split, std::filesystem::path>& split_files,
                           OutfitLayout layout, const std::filesystem::path& image_folder,
                           FileProblems& problems);

class OutfitDataset : public ImageDataset {
 public:
  ~OutfitDataset() override;
  DatasetInfo info() const final;
  // What every outfit dataset provides: triplet conditions that are type pairs, outfits, and the
  // items' text fields kTitleField and kCategoryField.
  static Contract contract_of(const OutfitDatasetOptions& options);

  // The seed of the far items of the triplets a split holds when it loads (every epoch of
  // validation and test uses them; training draws anew per epoch).
  static constexpr std::uint64_t kLoadSeed = 0x6f75746669747321;

 protected:
  // `types_file` names where the types come from, for messages about `held_out_types`.
  OutfitDataset(const OutfitDatasetOptions& options, TypeSpaces spaces,
                const std::filesystem::path& types_file);

  // Reads the layout's files (splits, metadata, types), putting every problem in `problems`.
  virtual OutfitCatalog read_catalog(FileProblems& problems) = 0;
  // Reads every file the dataset uses before anything trains: the catalog and each split's
  // compatibility lines and questions, reporting every problem at once. A layout calls it last in
  // its constructor, so that `wscsl check` reads them too.
  void read_files();
  // Where the layout keeps the release's precomputed text features (kReleasedTextFeatures); info()
  // offers them when the file is there.
  virtual std::filesystem::path released_text_features() const = 0;

  const TypeSpaces& spaces() const { return spaces_; }

  ImageList read_image_list(BadRows& bad) final;
  SplitData read_split(Split split, const ImageList& images, BadRows& bad) final;
  at::Tensor draw_epoch_triplets(Split split, std::int64_t epoch, std::uint64_t seed) final;

 private:
  OutfitDatasetOptions options_;
  TypeSpaces spaces_;
  std::vector<bool> held_out_;  // by type
  std::unique_ptr<OutfitCatalog> catalog_;
  struct SplitTasks;  // a split's compatibility lines and questions, resolved to image ids
  std::map<Split, std::unique_ptr<SplitTasks>> tasks_;
  std::map<Split, std::unique_ptr<OutfitTripletSampler>> samplers_;
};

}  // namespace wscsl
