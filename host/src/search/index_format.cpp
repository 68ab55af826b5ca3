#include "index_format.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

using Json = nlohmann::ordered_json;

// A manifest that parses but says something impossible.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses `path` as JSON and reads it with `read`; a file that is not JSON or lacks a field is one
// DataError naming the file and what was expected.
template <class Read>
auto read_json(const fs::path& path, const std::string& expected, Read&& read) {
  const Json document = Json::parse(read_text_file(path), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded())
    throw DataError(
        fmt::format("{}: not valid JSON; expected {} (the index is damaged: make it "
                    "again with `wscsl index`)",
                    path.string(), expected));
  try {
    return read(document);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(
        fmt::format("{}: {}; expected {} (the index is damaged: make it again with "
                    "`wscsl index`)",
                    path.string(), e.what(), expected));
  } catch (const Malformed& e) {
    throw DataError(
        fmt::format("{}: {}; expected {} (the index is damaged: make it again with "
                    "`wscsl index`)",
                    path.string(), e.what(), expected));
  }
}

// A command-line word: as it is when the shell keeps it so, else in single quotes.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || (c && std::strchr("/._-+=:,@%", c));
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

Comparison comparison_of(const std::string& text) {
  for (Comparison c : {Comparison::Distances, Comparison::PairScores})
    if (spelling(c) == text) return c;
  throw Malformed("unknown comparison \"" + text + "\"");
}

Json image_json(const IndexedImage& image) {
  if (!image.file.empty()) return image.file;
  return {{"split", image.split}, {"id", image.id}};
}

IndexedImage image_of(const Json& j) {
  IndexedImage image;
  if (j.is_string()) {
    image.file = j.get<std::string>();
  } else {
    image.split = j.at("split").get<std::string>();
    image.id = j.at("id").get<std::int64_t>();
  }
  return image;
}

}  // namespace

std::string spelling(Comparison comparison) {
  switch (comparison) {
    case Comparison::Distances:
      return "distances";
    case Comparison::PairScores:
      return "pair_scores";
  }
  throw Error("unknown comparison");
}

std::string IndexedImage::label() const {
  return file.empty() ? fmt::format("{}/{}", split, id) : file;
}

std::int64_t IndexManifest::rows() const {
  std::int64_t n = 0;
  for (std::int64_t c : chunks)
    n += c;
  return n;
}

fs::path manifest_path(const fs::path& index) {
  return index / "manifest.json";
}

fs::path chunk_path(const fs::path& index, std::size_t chunk, const std::string& what) {
  return index / "chunks" / fmt::format("{:06}.{}", chunk, what);
}

IndexManifest read_manifest(const fs::path& index) {
  const fs::path path = manifest_path(index);
  if (!fs::exists(path)) {
    std::error_code ec;
    const bool fresh = !fs::exists(index, ec) || fs::is_empty(index, ec);
    throw DataError(fmt::format(
        "{} is not a wscsl index: it has no manifest.json ({})", index.string(),
        fresh ? fmt::format("make one with `wscsl index RUN --images DIR --out {}`",
                            shell_word(index.string()))
              : "give the folder that `wscsl index RUN --images DIR --out INDEX` made"));
  }
  return read_json(path, "a wscsl index manifest", [&](const Json& j) {
    if (j.at("format").get<int>() != kIndexFormat)
      throw DataError(fmt::format(
          "{}: an index of format {}, which this wscsl does not read (it reads format {}); make "
          "it again in place, of the images it holds, with `{}`",
          path.string(), j.at("format").dump(), kIndexFormat,
          rebuild_command(index, j.at("run").at("directory").get<std::string>())));
    IndexManifest m;
    const Json& run = j.at("run");
    m.run = run.at("directory").get<std::string>();
    m.checkpoint = run.at("checkpoint").get<std::string>();
    m.checkpoint_sha256 = run.at("checkpoint_sha256").get<std::string>();
    const Json& module = j.at("condition_module");
    m.condition_module = module.at("label").get<std::string>();
    m.supervision = module.at("supervision").get<std::string>();
    m.alignment = module.at("alignment").get<std::string>();
    for (const Json& c : j.at("conditions"))
      m.conditions.push_back(
          {c.at("name").get<std::string>(), comparison_of(c.at("comparison").get<std::string>()),
           c.at("embedding").get<std::int64_t>(), c.at("condition").get<std::int64_t>()});
    const Json& arrays = j.at("arrays");
    m.phi_dim = arrays.at("phi_dim").get<std::int64_t>();
    m.embeddings = arrays.at("embeddings").get<std::int64_t>();
    m.psi_dim = arrays.at("psi_dim").get<std::int64_t>();
    for (const Json& t : arrays.at("texts"))
      m.texts.push_back({t.at("name").get<std::string>(), t.at("dim").get<std::int64_t>()});
    m.chunks = j.at("chunks").get<std::vector<std::int64_t>>();
    for (const Json& s : j.at("skipped"))
      m.skipped.push_back({s.at("file").get<std::string>(), s.at("reason").get<std::string>()});
    m.inputs = j.at("inputs").get<std::vector<std::string>>();
    for (std::int64_t rows : m.chunks)
      if (rows < 1) throw Malformed("a chunk of no rows");
    if (m.phi_dim < 1 || m.embeddings < 1 || m.psi_dim < 1)
      throw Malformed("an array dimension below 1");
    for (const IndexedCondition& c : m.conditions)
      if (c.embedding < -1 || c.embedding >= m.embeddings)
        throw Malformed(fmt::format("condition '{}' names embedding {} of {}", c.name, c.embedding,
                                    m.embeddings));
    return m;
  });
}

void write_manifest(const fs::path& index, const IndexManifest& m) {
  Json conditions = Json::array();
  for (const IndexedCondition& c : m.conditions)
    conditions.push_back({{"name", c.name},
                          {"comparison", spelling(c.comparison)},
                          {"embedding", c.embedding},
                          {"condition", c.condition}});
  Json texts = Json::array();
  for (const TextArray& t : m.texts)
    texts.push_back({{"name", t.name}, {"dim", t.dim}});
  Json skipped = Json::array();
  for (const SkippedFile& s : m.skipped)
    skipped.push_back({{"file", s.file}, {"reason", s.reason}});
  const Json document = {
      {"format", kIndexFormat},
      {"run",
       {{"directory", m.run},
        {"checkpoint", m.checkpoint},
        {"checkpoint_sha256", m.checkpoint_sha256}}},
      {"condition_module",
       {{"label", m.condition_module}, {"supervision", m.supervision}, {"alignment", m.alignment}}},
      {"conditions", conditions},
      {"arrays",
       {{"phi_dim", m.phi_dim},
        {"embeddings", m.embeddings},
        {"psi_dim", m.psi_dim},
        {"texts", texts}}},
      {"rows", m.rows()},
      {"chunks", m.chunks},
      {"skipped", skipped},
      {"inputs", m.inputs}};
  write_file_atomically(manifest_path(index), document.dump(2) + "\n");
}

std::string rebuild_command(const fs::path& index, const std::string& run) {
  return fmt::format("wscsl index {} --out {} --rebuild", shell_word(run),
                     shell_word(index.string()));
}

HeldImages read_held_images(const fs::path& index) {
  const fs::path path = manifest_path(index);
  if (!fs::exists(path))
    throw DataError(fmt::format(
        "{} is not a wscsl index: it has no manifest.json; --rebuild makes an index again of "
        "the images it holds",
        index.string()));
  HeldImages held = read_json(path, "a wscsl index manifest", [&](const Json& j) {
    HeldImages h;
    h.format = j.at("format").get<int>();
    h.run = j.at("run").at("directory").get<std::string>();
    if (h.format >= 3) h.inputs = j.at("inputs").get<std::vector<std::string>>();
    const auto chunks = j.at("chunks").get<std::vector<std::int64_t>>();
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      if (chunks[c] < 1) throw Malformed("a chunk of no rows");
      const std::vector<IndexedImage> images = read_chunk_images(index, c, chunks[c]);
      h.images.insert(h.images.end(), images.begin(), images.end());
    }
    return h;
  });
  if (held.images.empty())
    throw DataError(
        fmt::format("{} holds no images: there is nothing to make again", index.string()));
  return held;
}

std::vector<IndexedImage> read_chunk_images(const fs::path& index, std::size_t chunk,
                                            std::int64_t rows) {
  const fs::path path = chunk_path(index, chunk, "images.json");
  return read_json(path, fmt::format("a list of the chunk's {} images", rows), [&](const Json& j) {
    std::vector<IndexedImage> images;
    for (const Json& image : j)
      images.push_back(image_of(image));
    if (static_cast<std::int64_t>(images.size()) != rows)
      throw Malformed(fmt::format("{} images where manifest.json counts {}", images.size(), rows));
    return images;
  });
}

void write_chunk_images(const fs::path& index, std::size_t chunk,
                        const std::vector<IndexedImage>& images) {
  Json list = Json::array();
  for (const IndexedImage& image : images)
    list.push_back(image_json(image));
  write_file_atomically(chunk_path(index, chunk, "images.json"), list.dump() + "\n");
}

SearchTarget search_target(const fs::path& target, const fs::path& run) {
  if (fs::exists(manifest_path(target))) return {target, run};
  if (fs::exists(target / "resolved.toml")) {
    if (fs::exists(manifest_path(target / "index")))
      return {target / "index", run.empty() ? target : run};
    throw Error(
        fmt::format("{} is a run without an index: `wscsl index {} --split test` (or "
                    "--images DIR) makes {}",
                    target.string(), target.string(), (target / "index").string()));
  }
  std::error_code ec;
  if (!fs::exists(target, ec) || fs::is_empty(target, ec))
    throw Error(fmt::format(
        "{} is neither an index nor a run directory: it is {}; `wscsl index RUN --images DIR "
        "--out {}` makes an index there",
        target.string(), fs::exists(target, ec) ? "an empty folder" : "not there",
        target.string()));
  throw Error(
      fmt::format("{} is neither an index (no manifest.json) nor a run directory (no "
                  "resolved.toml); give the folder `wscsl index RUN --out INDEX` made, or the "
                  "run directory RUN whose RUN/index it made",
                  target.string()));
}

}  // namespace wscsl::host::search
