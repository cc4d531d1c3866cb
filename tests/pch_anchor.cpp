// Compiled only so CMake has a translation unit to build the tests' shared precompiled
// header (catch2/catch.hpp) from; see tests/CMakeLists.txt.
