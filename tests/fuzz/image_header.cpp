// The JPEG and PNG header checks every image passes before a codec sees it.
#include "wscsl/data/image_header.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const wscsl::ImageHeader h = wscsl::read_image_header(bytes, std::int64_t{1} << 24);
  if (h.problem.empty() && (h.width <= 0 || h.height <= 0 || h.width * h.height > (1 << 24)))
    __builtin_trap();
  return 0;
}
