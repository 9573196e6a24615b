# br and zstd decoding (src/codings.cpp): libbrotlidec (+ libbrotlicommon) and libzstd, as the imported targets
# beast_client_brotlidec and beast_client_zstd, and BEAST_CLIENT_BROTLI_ZSTD_FOUND.
#
#   BEAST_CLIENT_BROTLI_ZSTD  ON: required; OFF: not built in (gzip and deflate only); AUTO (the default): required
#                             when the tests or the Python binding are built, otherwise used when this compiler
#                             sees the system's headers or BEAST_CLIENT_CODECS_ROOT is given. (A cross toolchain,
#                             such as the zig one of the native wheel, does not see /usr/include: adding it would
#                             put the build machine's glibc headers first.)
#   BEAST_CLIENT_CODECS_ROOT  a prefix (include/, lib/) holding both, searched alone (the manylinux wheels' static
#                             builds: scripts/build-beast-wheel.sh)
#   BEAST_CLIENT_CODECS_STATIC  link the .a archives (the wheels)
set(BEAST_CLIENT_BROTLI_ZSTD AUTO CACHE STRING "br and zstd decoding (libbrotlidec, libzstd): ON, OFF or AUTO")
set_property(CACHE BEAST_CLIENT_BROTLI_ZSTD PROPERTY STRINGS ON OFF AUTO)
set(BEAST_CLIENT_CODECS_ROOT "" CACHE PATH "prefix of libbrotlidec and libzstd (searched alone)")
option(BEAST_CLIENT_CODECS_STATIC "link libbrotlidec and libzstd statically" OFF)

set(BEAST_CLIENT_BROTLI_ZSTD_FOUND OFF)
set(_codecs_mode ${BEAST_CLIENT_BROTLI_ZSTD})
if(_codecs_mode STREQUAL "AUTO" AND (BEAST_CLIENT_BUILD_TESTS OR BEAST_CLIENT_FOR_PYTHON))
  set(_codecs_mode ON)
endif()

if(NOT _codecs_mode STREQUAL "OFF")
  set(_hints)
  if(BEAST_CLIENT_CODECS_ROOT)
    set(_hints PATHS ${BEAST_CLIENT_CODECS_ROOT} NO_DEFAULT_PATH)
  endif()
  if(BEAST_CLIENT_CODECS_STATIC)
    set(_brotlidec libbrotlidec.a)
    set(_brotlicommon libbrotlicommon.a)
    set(_zstd libzstd.a)
  else()
    set(_brotlidec brotlidec)
    set(_brotlicommon brotlicommon)
    set(_zstd zstd)
  endif()
  find_path(BEAST_CLIENT_BROTLI_INCLUDE_DIR brotli/decode.h PATH_SUFFIXES include ${_hints})
  find_path(BEAST_CLIENT_ZSTD_INCLUDE_DIR zstd.h PATH_SUFFIXES include ${_hints})
  find_library(BEAST_CLIENT_BROTLIDEC_LIBRARY NAMES ${_brotlidec} PATH_SUFFIXES lib lib64 ${_hints})
  find_library(BEAST_CLIENT_BROTLICOMMON_LIBRARY NAMES ${_brotlicommon} PATH_SUFFIXES lib lib64 ${_hints})
  find_library(BEAST_CLIENT_ZSTD_LIBRARY NAMES ${_zstd} PATH_SUFFIXES lib lib64 ${_hints})
  set(_found ON)
  foreach(v BEAST_CLIENT_BROTLI_INCLUDE_DIR BEAST_CLIENT_ZSTD_INCLUDE_DIR BEAST_CLIENT_BROTLIDEC_LIBRARY
            BEAST_CLIENT_BROTLICOMMON_LIBRARY BEAST_CLIENT_ZSTD_LIBRARY)
    if(NOT ${v})
      set(_found OFF)
    endif()
  endforeach()
  if(_found AND _codecs_mode STREQUAL "AUTO" AND NOT BEAST_CLIENT_CODECS_ROOT)
    foreach(dir ${BEAST_CLIENT_BROTLI_INCLUDE_DIR} ${BEAST_CLIENT_ZSTD_INCLUDE_DIR})
      if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
        set(_found OFF)
      endif()
    endforeach()
  endif()
  if(_found)
    set(BEAST_CLIENT_BROTLI_ZSTD_FOUND ON)
    add_library(beast_client_brotlidec INTERFACE IMPORTED)
    set_target_properties(beast_client_brotlidec PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES ${BEAST_CLIENT_BROTLI_INCLUDE_DIR}
      INTERFACE_LINK_LIBRARIES "${BEAST_CLIENT_BROTLIDEC_LIBRARY};${BEAST_CLIENT_BROTLICOMMON_LIBRARY}")
    add_library(beast_client_zstd INTERFACE IMPORTED)
    set_target_properties(beast_client_zstd PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES ${BEAST_CLIENT_ZSTD_INCLUDE_DIR}
      INTERFACE_LINK_LIBRARIES ${BEAST_CLIENT_ZSTD_LIBRARY})
    message(STATUS "beast_client: br and zstd decoding (${BEAST_CLIENT_BROTLIDEC_LIBRARY}, ${BEAST_CLIENT_ZSTD_LIBRARY})")
  elseif(_codecs_mode STREQUAL "ON")
    message(FATAL_ERROR "beast_client: libbrotlidec and libzstd are required (BEAST_CLIENT_BROTLI_ZSTD=${BEAST_CLIENT_BROTLI_ZSTD}): "
                        "apt-get install libbrotli-dev libzstd-dev, or set BEAST_CLIENT_CODECS_ROOT; "
                        "-DBEAST_CLIENT_BROTLI_ZSTD=OFF builds without br and zstd decoding")
  else()
    message(STATUS "beast_client: no br and zstd decoding (libbrotlidec / libzstd not found for this compiler)")
  endif()
endif()
