// Polyvore Outfits' `typespaces.p`: a Python pickle of a list of (type1, type2) tuples of str, the
// position of a pair in the list being its condition. The reader accepts exactly the opcodes that
// pickle protocols 0 to 4 write for such a list (Python 2's str and Python 3's str, memo puts and
// gets, frames) and refuses everything else — a pickle is a program, and no other of its opcodes
// is ever run. The writer pickles such a list with protocol 2, as the embedded outfit benchmark
// ships it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace wscsl {

using TypePair = std::pair<std::string, std::string>;

// Bounds a hostile pickle hits before it can exhaust memory (the released file has 66 pairs in a
// few kilobytes): the file's size, the values it builds (stack pushes, memo references included)
// and the bytes of type names its list holds, each memo reference counted.
inline constexpr std::uintmax_t kMaxTypePairsPickleBytes = std::uintmax_t{1} << 20;
inline constexpr std::size_t kMaxTypePairsPickleValues = 100000;
inline constexpr std::size_t kMaxTypePairsTextBytes = std::size_t{1} << 20;

// The pairs pickled in `bytes`, in list order. Throws DataError naming `file`, the byte offset and
// what was expected.
std::vector<TypePair> parse_type_pairs_pickle(const std::string& bytes,
                                              const std::filesystem::path& file);
// The same for a file.
std::vector<TypePair> read_type_pairs_pickle(const std::filesystem::path& file);

// The bytes of typespaces.p holding `pairs` in order: protocol 2 without memo entries, which
// Python's pickle.loads reads as the list of tuples.
std::string pickle_type_pairs(const std::vector<TypePair>& pairs);

}  // namespace wscsl
