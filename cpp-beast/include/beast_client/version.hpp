// beast_client/version.hpp: the library's version, its one source (CMakeLists.txt reads it for project()).
// Checked in rather than generated into each build tree: a generated header's path differs per build folder,
// so the compiler cache could not give the library's objects back to the bindings' and wheels' builds.
#pragma once

#define BEAST_CLIENT_VERSION_MAJOR 0
#define BEAST_CLIENT_VERSION_MINOR 1
#define BEAST_CLIENT_VERSION_PATCH 0
#define BEAST_CLIENT_VERSION "0.1.0"
