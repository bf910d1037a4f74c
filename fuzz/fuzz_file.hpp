// fuzz/fuzz_file.hpp
//
// FuzzFile: the fuzz input written to a file, for loaders that take a path
// (safetensors, npy). One file per process, rewritten for each input.
//
// Contract
//   * write() replaces the file's contents with the bytes; path() names it.
//   * The file lives in $TMPDIR (or /tmp) and is removed at exit.
// Threading: one fuzzing thread (libFuzzer runs inputs one at a time).
// Errors: a failed write aborts: the fuzzer could not test anything.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kinformer::fuzz {

class FuzzFile {
 public:
  explicit FuzzFile(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ =
        std::string(dir && *dir ? dir : "/tmp") + "/kinformer-fuzz-" + std::to_string(::getpid()) + suffix;
  }
  ~FuzzFile() { std::remove(path_.c_str()); }
  FuzzFile(const FuzzFile&) = delete;
  FuzzFile& operator=(const FuzzFile&) = delete;

  void write(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) std::abort();
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

}  // namespace kinformer::fuzz
