#include "index_arrays.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/data/npy.hpp"
#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl::host::search {
namespace {

constexpr const char* kFloat = "<f4";
constexpr const char* kLong = "<i8";

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("({})", fmt::join(shape, ", "));
}

void write_array(const fs::path& file, const char* descr, const torch::Tensor& values) {
  const torch::Tensor data =
      values.to(descr == kFloat ? torch::kFloat : torch::kLong).to(torch::kCPU).contiguous();
  write_npy(file, descr, data.sizes().vec(),
            {static_cast<const char*>(data.data_ptr()), data.nbytes()});
}

std::string text_file(const TextArray& t, bool presence) {
  return "text." + t.name + (presence ? ".present.npy" : ".npy");
}

}  // namespace

MappedNpy::MappedNpy(const fs::path& file, const std::string& descr,
                     const std::vector<std::int64_t>& shape) {
  const std::string header = npy_header(descr, shape);
  std::int64_t count = 1;
  for (std::int64_t d : shape)
    count *= d;
  const std::size_t item = descr == kFloat ? 4 : 8;
  const std::size_t expected = header.size() + static_cast<std::size_t>(count) * item;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw DataError(
        fmt::format("{}: cannot open it ({}); the index is damaged or incomplete "
                    "(make it again with `wscsl index`)",
                    file.string(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != expected) {
    ::close(fd);
    throw DataError(fmt::format(
        "{}: {} bytes; the {} array of shape {} the manifest describes "
        "takes {} (the index is damaged: make it again with `wscsl index`)",
        file.string(), static_cast<std::int64_t>(st.st_size), descr, shape_text(shape), expected));
  }
  map_ = ::mmap(nullptr, expected, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw DataError(fmt::format("{}: cannot map it ({})", file.string(), std::strerror(errno)));
  }
  bytes_ = expected;
  if (std::memcmp(map_, header.data(), header.size()) != 0) {
    ::munmap(map_, bytes_);
    map_ = nullptr;
    throw DataError(
        fmt::format("{}: its header is not the .npy header of a {} array of shape {} "
                    "that the manifest describes (the index is damaged: make it again "
                    "with `wscsl index`)",
                    file.string(), descr, shape_text(shape)));
  }
  // LibTorch takes a mutable pointer; the tensor is only ever read.
  tensor_ = torch::from_blob(static_cast<char*>(map_) + header.size(), shape,
                             descr == kFloat ? torch::kFloat : torch::kLong);
}

MappedNpy::~MappedNpy() {
  if (map_) ::munmap(map_, bytes_);
}

ItemFeatures ChunkArrays::items(const IndexManifest& manifest, const torch::Tensor& rows) const {
  ItemFeatures out;
  out.phi = phi->tensor().index_select(0, rows);
  out.psi = psi->tensor().index_select(1, rows).transpose(0, 1).contiguous();
  for (std::size_t t = 0; t < manifest.texts.size(); ++t)
    out.texts[manifest.texts[t].name] = {text_features[t]->tensor().index_select(0, rows),
                                         text_present[t]->tensor().index_select(0, rows) != 0};
  return out;
}

ChunkArrays map_chunk(const fs::path& index, const IndexManifest& manifest, std::size_t chunk) {
  const std::int64_t n = manifest.chunks.at(chunk);
  ChunkArrays a;
  a.phi = std::make_unique<MappedNpy>(chunk_path(index, chunk, "phi.npy"), kFloat,
                                      std::vector<std::int64_t>{n, manifest.phi_dim});
  a.psi = std::make_unique<MappedNpy>(
      chunk_path(index, chunk, "psi.npy"), kFloat,
      std::vector<std::int64_t>{manifest.embeddings, n, manifest.psi_dim});
  a.psi_sqnorm = std::make_unique<MappedNpy>(chunk_path(index, chunk, "psi_sqnorm.npy"), kFloat,
                                             std::vector<std::int64_t>{manifest.embeddings, n});
  for (const TextArray& t : manifest.texts) {
    a.text_features.push_back(
        std::make_unique<MappedNpy>(chunk_path(index, chunk, text_file(t, false)), kFloat,
                                    std::vector<std::int64_t>{n, t.dim}));
    a.text_present.push_back(std::make_unique<MappedNpy>(
        chunk_path(index, chunk, text_file(t, true)), kLong, std::vector<std::int64_t>{n}));
  }
  return a;
}

void write_chunk_arrays(const fs::path& index, const IndexManifest& manifest, std::size_t chunk,
                        const ItemFeatures& items) {
  write_array(chunk_path(index, chunk, "phi.npy"), kFloat, items.phi);
  const torch::Tensor by_embedding = items.psi.transpose(0, 1);  // [K, n, E]
  write_array(chunk_path(index, chunk, "psi.npy"), kFloat, by_embedding);
  write_array(chunk_path(index, chunk, "psi_sqnorm.npy"), kFloat,
              by_embedding.to(torch::kFloat).pow(2).sum(-1));
  for (const TextArray& t : manifest.texts) {
    const TextFeatures& f = items.texts.at(t.name);
    write_array(chunk_path(index, chunk, text_file(t, false)), kFloat, f.features);
    write_array(chunk_path(index, chunk, text_file(t, true)), kLong, f.present);
  }
}

}  // namespace wscsl::host::search
