# POSENC_WARNING_OPTIONS: the project's warning flags (with -Werror when POSENC_WERROR), for the
# top-level build (add_compile_options) and for the peers' own sources built in sub-projects
# beside third-party code, which keeps its own flags (peers/llamacpp/plugin).
set(POSENC_WARNING_OPTIONS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
if(POSENC_WERROR)
  list(APPEND POSENC_WARNING_OPTIONS -Werror)
endif()
# GCC 12 reports -Wrestrict on std::string concatenation at -O2 (GCC bug 105651, a false positive
# in libstdc++'s inlined char_traits); it is fixed in GCC 13.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND POSENC_WARNING_OPTIONS -Wno-restrict)
endif()
