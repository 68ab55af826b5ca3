# A source that calls fmt::join includes <fmt/ranges.h>: fmt 11 and later (a PyTorch wheel brings
# fmt 12) declare it only there, while Debian 12's fmt 9 also declares it in <fmt/format.h>, so a
# build against Debian's fmt alone cannot notice the missing include. Argument: SOURCE_DIR.
file(GLOB_RECURSE sources "${SOURCE_DIR}/core/*.cpp" "${SOURCE_DIR}/core/*.hpp"
     "${SOURCE_DIR}/host/*.cpp" "${SOURCE_DIR}/host/*.hpp" "${SOURCE_DIR}/plugins/*.cpp"
     "${SOURCE_DIR}/plugins/*.hpp" "${SOURCE_DIR}/tests/*.cpp" "${SOURCE_DIR}/tests/*.hpp"
     "${SOURCE_DIR}/bench/*.cpp" "${SOURCE_DIR}/examples/*.cpp" "${SOURCE_DIR}/examples/*.hpp")
set(found "")
set(joining 0)
foreach(source IN LISTS sources)
  file(READ "${source}" text)
  if(text MATCHES "fmt::join\\(")
    math(EXPR joining "${joining} + 1")
    if(NOT text MATCHES "#include <fmt/ranges.h>")
      string(APPEND found "\n  ${source}")
    endif()
  endif()
endforeach()
if(found)
  message(FATAL_ERROR "these sources call fmt::join without #include <fmt/ranges.h>, where fmt 11 "
                      "and later declare it:${found}")
endif()
message(STATUS "${joining} sources that call fmt::join include <fmt/ranges.h>")
