# Options that choose among names are enums dispatched with `switch`, and options filled from the
# host's facts are plain values: no plugin or host source compares an option with a string literal
# or falls back with value_or. Argument: SOURCE_DIR.
file(GLOB_RECURSE sources "${SOURCE_DIR}/plugins/*.cpp" "${SOURCE_DIR}/plugins/*.hpp"
     "${SOURCE_DIR}/host/*.cpp" "${SOURCE_DIR}/host/*.hpp" "${SOURCE_DIR}/core/*.cpp"
     "${SOURCE_DIR}/core/*.hpp")
set(found "")
foreach(source IN LISTS sources)
  if(source MATCHES "/tests/")
    continue()
  endif()
  file(STRINGS "${source}" lines)
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "(options_?|o_?)\\.[a-z_]+ *[!=]= *\"" OR
       line MATCHES "(options_?|o_?)\\.[a-z_]+\\.value_or\\(")
      string(APPEND found "\n${source}:${number}: ${line}")
    endif()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "options compared with strings or given fallbacks (use an enum with "
                      "EnumChoices and a switch; a fact-derived field is a plain value):${found}")
endif()
list(LENGTH sources count)
message(STATUS "${count} sources dispatch options through enums")
