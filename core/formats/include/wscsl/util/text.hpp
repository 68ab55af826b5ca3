// Small string helpers shared by diagnostics, the host and plugins.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wscsl {

// Levenshtein distance (insertions, deletions, substitutions of single characters).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is a plausible misspelling (distance <= max(2, |word|/3)),
// else an empty string.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& parts, std::string_view separator);

// Values in messages: strings quoted, everything else as written.
std::string quote_toml(std::string_view s);

// Longest part of a value that a message quotes.
inline constexpr std::size_t kMaxQuotedBytes = 200;

// A value read from a data file, for a message: in single quotes, its control bytes, DEL, and bytes
// that are not UTF-8 written as \x1b, and cut after about kMaxQuotedBytes bytes with an ellipsis
// ('abc…' plus how many bytes were left out).
std::string quoted_excerpt(std::string_view value);

// A TOML key: bare when it can be, quoted otherwise.
std::string toml_key(const std::string& key);

std::vector<std::string> split(std::string_view s, char separator);

// C++20's string_view::starts_with and ends_with, for C++17.
inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace wscsl
