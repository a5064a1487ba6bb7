#!/bin/sh
# The compiler launcher CMakeLists.txt sets where ccache is installed: ccache with this source
# tree as its base folder (absolute paths below it are hashed relative to the build folder, so a
# clone in another folder hits the same entries) and without the build folder in the hash. The
# sanitizer ignorelist's option is left out of the hash too: its absolute path is not rewritten,
# and CMakeLists.txt passes the list's SHA-256 as a definition instead.
CCACHE_BASEDIR=${0%/scripts/ccache.sh} CCACHE_NOHASHDIR=true CCACHE_IGNOREOPTIONS='-fsanitize-ignorelist=*' \
  exec ccache "$@"
