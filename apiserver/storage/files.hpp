// apiserver/storage/files.hpp
//
// The few POSIX file operations the durable store is built from, each with the
// fsync discipline that makes it crash-safe.
//
// Contract
//   * write_file_atomically(): temp file in the same directory, write, fsync, rename
//     over `path`, fsync the directory: after it returns, a crash leaves either the old
//     or the new content, never a mix, and the new one survives.
//   * sync_directory(): makes created, renamed or removed names in `dir` durable.
//   * read_file(): the whole file; the error names the path and errno text.
//   * check_directory(): the directory exists, is a directory and is writable.
//   * io_error(): the error every storage file operation reports, naming the path and errno.
// Threading: plain functions. Errors: Result with Errc::server_error naming the path.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/result.hpp"

namespace kinformer::apiserver::storage {

/// "dir" of "dir/name"; "." for a bare name.
std::string directory_of(const std::string& path);
/// "name" of "dir/name".
std::string base_name_of(const std::string& path);

/// Errc::server_error "<what> <path>: <strerror(errno)>", for the call that just failed.
Error io_error(const std::string& what, const std::string& path);

Result<void> check_directory(const std::string& dir);
Result<void> sync_directory(const std::string& dir);
Result<void> write_file_atomically(const std::string& path, const std::string& content);
Result<std::string> read_file(const std::string& path);
/// Writes all of `data` to `fd` at byte `offset` (retrying short writes and EINTR); false with errno set.
bool write_all(int fd, const char* data, std::size_t size, std::uint64_t offset);

}  // namespace kinformer::apiserver::storage
