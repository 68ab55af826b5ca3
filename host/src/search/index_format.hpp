// The index directory `wscsl index` writes and `wscsl search` reads (docs/search.md):
//
//   manifest.json                  what the index holds: the run and its checkpoint's SHA-256,
//                                  the conditions and how each is compared, the committed chunks
//   chunks/<c>.images.json         the images of chunk c, one entry per row, in row order
//   chunks/<c>.phi.npy             [n, D] float32 φ
//   chunks/<c>.psi.npy             [K, n, E] float32 every ψ_k, each one contiguous [n, E] array
//                                  (a search reads one ψ_k in order: 2× faster than [n, K, E])
//   chunks/<c>.psi_sqnorm.npy      [K, n] float32 ‖ψ_k‖², for the block products of the search
//   chunks/<c>.text.<name>.npy     [n, T] float32 features of text encoder <name>
//   chunks/<c>.text.<name>.present.npy  [n] int64 1 where the item had a text
//
// A chunk is committed when manifest.json lists it: its files are written first, each atomically,
// then the manifest, so an interrupted `index` leaves the chunks before it whole and a re-run
// continues after them. The manifest records the inputs of every call that added images; an index
// of another format is refused naming `wscsl index RUN --out INDEX --rebuild`, which embeds the
// images it holds again (chunks/<c>.images.json, unchanged since format 1).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wscsl::host::search {

inline constexpr int kIndexFormat = 3;

// How one condition ranks the index with the condition module.
enum class Comparison {
  // ConditionModule::distances of ψ under the condition's embedding, as the retrieval evaluators
  // rank; a function of the two items' ψ_k alone.
  Distances,
  // ConditionModule::score of (query, item) pairs, fused_second, with the condition given to a
  // conditioned module, none to a weak one: the distance the module predicts with, which may
  // depend on the pair (SCE-Net's pair branch, type-aware's type-pair masks).
  PairScores,
};
std::string spelling(Comparison comparison);

struct IndexedCondition {
  std::string name;
  Comparison comparison = Comparison::Distances;
  // The ψ_k whose Euclidean block products draw the candidates; -1: every ψ_k together.
  std::int64_t embedding = -1;
  // The condition a conditioned module's score is given; -1: none.
  std::int64_t condition = -1;
};

// Where an indexed image came from: a file, or an image of a dataset split.
struct IndexedImage {
  std::string file;   // absolute path; empty for a split's image
  std::string split;  // "test"; empty for a file
  std::int64_t id = -1;

  std::string label() const;  // the file, or "<split>/<id>"
  bool operator==(const IndexedImage& o) const {
    return file == o.file && split == o.split && id == o.id;
  }
};

struct SkippedFile {
  std::string file;
  std::string reason;
};

struct TextArray {
  std::string name;  // the text encoder's name
  std::int64_t dim = 0;
};

struct IndexManifest {
  std::string run;                // the run directory, absolute
  std::string checkpoint;         // the checkpoint embedded with
  std::string checkpoint_sha256;  // of its archive (the checkpoint's own manifest)
  std::string condition_module;   // the module's label, e.g. "condition_module/csn_masks"
  std::string supervision;        // "weak" or "conditioned"
  std::string alignment;          // where the condition ↔ embedding alignment came from
  std::vector<IndexedCondition> conditions;
  std::int64_t phi_dim = 0, embeddings = 0, psi_dim = 0;
  std::vector<TextArray> texts;
  std::vector<std::int64_t> chunks;  // rows of each committed chunk
  std::vector<SkippedFile> skipped;  // files of the folders indexed that are not usable images
  // How the images were given, one entry per input that added any, in order: "--images DIR",
  // "--list FILE" (absolute), "--split NAME", or "--rebuild of an index of format N".
  std::vector<std::string> inputs;

  std::int64_t rows() const;
};

std::filesystem::path manifest_path(const std::filesystem::path& index);
std::filesystem::path chunk_path(const std::filesystem::path& index, std::size_t chunk,
                                 const std::string& what);

// Throws DataError naming manifest.json and what is wrong with it; an index of another format is
// refused naming rebuild_command.
IndexManifest read_manifest(const std::filesystem::path& index);
void write_manifest(const std::filesystem::path& index, const IndexManifest& manifest);

// The command that makes the index at `index`, of the run `run`, again in place of the images it
// holds, in this wscsl's format: `wscsl index RUN --out INDEX --rebuild`, paths quoted for the
// shell where they need it.
std::string rebuild_command(const std::filesystem::path& index, const std::string& run);

// What an index of any format holds, for --rebuild: read from the fields every format has.
struct HeldImages {
  int format = 0;
  std::string run;                  // the run directory its manifest names
  std::vector<std::string> inputs;  // IndexManifest::inputs (none before format 3)
  std::vector<IndexedImage> images;
};
// Throws DataError naming the file that is not as every format writes it.
HeldImages read_held_images(const std::filesystem::path& index);

// The images of one chunk; throws DataError naming its file.
std::vector<IndexedImage> read_chunk_images(const std::filesystem::path& index, std::size_t chunk,
                                            std::int64_t rows);
void write_chunk_images(const std::filesystem::path& index, std::size_t chunk,
                        const std::vector<IndexedImage>& images);

// What `search` and `explore` are given: an index directory, or a run directory whose index is
// RUN/index (its run then being that directory, wherever the run was when it was indexed).
struct SearchTarget {
  std::filesystem::path index;
  std::filesystem::path run;  // empty: the one the index's manifest names
};
// `run` is the run the command was given (empty: none). Throws Error naming `target` and what
// makes an index of it when it is neither an index nor a run directory with one.
SearchTarget search_target(const std::filesystem::path& target, const std::filesystem::path& run);

}  // namespace wscsl::host::search
