// The split files of attribute-specific retrieval as ASEN++ released them for FashionAI, DARN and
// DeepFashion, which wscsl reads (`attribute_splits`) and writes (`wscsl make-splits`, the
// generated region benchmark):
//
//   <dir>/filenames_{train,valid,test}.txt   one image path a line, relative to <dir>; the 0-based
//                                            line index is the image's index in that split
//   <dir>/label_train.txt                    "img a v a v …": an index into filenames_train, then
//                                            (attribute, value) pairs
//   <dir>/{query,candidate}_{valid,test}.txt "img a v": an index into that split's filenames, an
//                                            attribute and its value
//
// Attributes and values are 0-based indices into a table the files do not hold (the released
// configurations name them); every value of attribute a lies in [0, value count of a).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "wscsl/data/index_files.hpp"

namespace wscsl {

// The evaluation splits of the layout, as its file names spell them.
enum class AttributeSplit { Valid, Test };
std::string_view attribute_split_name(AttributeSplit split);  // "valid", "test"

std::filesystem::path attribute_image_list(const std::filesystem::path& dir,
                                           std::string_view split);  // "train", "valid", "test"
std::filesystem::path attribute_label_file(const std::filesystem::path& dir);
std::filesystem::path attribute_query_file(const std::filesystem::path& dir, AttributeSplit split);
std::filesystem::path attribute_candidate_file(const std::filesystem::path& dir,
                                               AttributeSplit split);

// One (image, attribute, value) of a label, query or candidate line.
struct AttributeLine {
  std::int64_t image = 0;      // index into the split's image list
  std::int64_t attribute = 0;  // index into the attribute table
  std::int64_t value = 0;      // index among the attribute's values
  std::int64_t line = 0;       // the file's line, from 1
};

// Reads label_train.txt (any number of pairs after the image) or a query/candidate file (exactly
// one pair) against an image list of `num_images` entries and the attribute table's value counts
// `values` (one per attribute). A line with the wrong columns, a token that is not a non-negative
// integer, an image index out of range, an unknown attribute or a value ≥ the attribute's count is
// a bad row (`bad` rejects it "file:line: reason"). Blank lines are ignored.
std::vector<AttributeLine> read_attribute_lines(const std::filesystem::path& file,
                                                bool several_pairs, std::int64_t num_images,
                                                const std::filesystem::path& image_list,
                                                const std::vector<std::int64_t>& values,
                                                BadRows& bad);

// Writes an image list, a label file (one line per image with its known pairs, in attribute
// order) or a query/candidate file, replacing each atomically. A path with a line break is an
// error.
void write_attribute_image_list(const std::filesystem::path& file,
                                const std::vector<std::string>& paths);
void write_attribute_labels(const std::filesystem::path& file,
                            const std::vector<AttributeLine>& pairs);
void write_attribute_queries(const std::filesystem::path& file,
                             const std::vector<AttributeLine>& lines);

}  // namespace wscsl
