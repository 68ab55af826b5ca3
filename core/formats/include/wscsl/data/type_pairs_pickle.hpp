// Polyvore Outfits' `typespaces.p`: a Python pickle of a list of (type1, type2) tuples of str, the
// position of a pair in the list being its condition. The reader accepts exactly the opcodes that
// pickle protocols 0 to 4 write for such a list (Python 2's str and Python 3's str, memo puts and
// gets, frames) and refuses everything else — a pickle is a program, and no other of its opcodes
// is ever run.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace wscsl {

using TypePair = std::pair<std::string, std::string>;

// The pairs pickled in `bytes`, in list order. Throws DataError naming `file`, the byte offset and
// what was expected.
std::vector<TypePair> parse_type_pairs_pickle(const std::string& bytes,
                                              const std::filesystem::path& file);
// The same for a file.
std::vector<TypePair> read_type_pairs_pickle(const std::filesystem::path& file);

}  // namespace wscsl
