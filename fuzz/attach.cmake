# Included at the end of the top-level project() call by fuzz/run_fuzzer.sh
# (CMAKE_PROJECT_pailfs_INCLUDE), so a clang build directory gets the fuzz
# targets without changing the top-level CMakeLists.txt.
add_subdirectory(${CMAKE_SOURCE_DIR}/fuzz ${CMAKE_BINARY_DIR}/fuzz)
