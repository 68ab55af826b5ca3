// A generated data set on disk, made safe to share: written into a staging folder (against
// interruption) under a lock (against concurrent processes), with a stamp of the options it was
// made with written last, and never deleting a folder it did not write. The embedded outfit
// benchmark and the region benchmark are written through it.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace wscsl::data {

struct GeneratedFolder {
  std::string name;   // "outfit_benchmark": the stamp is "wscsl_<name>.stamp"
  std::string what;   // "outfit benchmark", for messages
  std::string stamp;  // the options it is made with, as text
};

// Writes the data set into `root` with `write` (given the staging folder) unless a complete one
// with the same stamp is there. A folder `root` that holds something else is an Error, as is any
// failure to write, move or remove a folder.
void ensure_generated_folder(const std::filesystem::path& root, const GeneratedFolder& folder,
                             const std::function<void(const std::filesystem::path&)>& write);

// `content` as the file `path` (not atomically: generated data are written in a staging folder).
void write_text_file(const std::filesystem::path& path, const std::string& content);
// `dir` and the folders above it.
void create_folder(const std::filesystem::path& dir);

}  // namespace wscsl::data
