// The fuzz targets' filesystem lives from the first input to the end of the
// process. Deleting it from an atexit handler registered once it is built
// stops its threads before exit() destroys the statics of the libraries they
// use (spdlog's registry, RocksDB's), which are older and so go later; left
// running, those threads crashed after libFuzzer's "Done" in about one run
// of five.
#pragma once

#include <cstdlib>

template <typename T>
T* DeleteAtExit(T* object) {
  static T* kept = object;
  std::atexit([] { delete kept; });
  return object;
}
