// What every fuzz target shares: its entry point, and the rule that a parser may only refuse its
// input with wscsl's own exceptions (one sentence naming the input). Any other exception, a crash
// or a sanitizer report is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "wscsl/error.hpp"

// Runs `parse` on the input as text; wscsl::Error is a refusal, anything else escapes.
template <class Parse>
int fuzz_text(const std::uint8_t* data, std::size_t size, Parse&& parse) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    parse(text);
  } catch (const wscsl::Error&) {
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
