#include "apiserver/storage/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kinformer::apiserver::storage {

Error io_error(const std::string& what, const std::string& path) {
  return Error{Errc::server_error, what + " " + path + ": " + std::strerror(errno)};
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool write_all(int fd, const char* data, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    auto n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

Result<void> check_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return io_error("the data file's directory cannot be used:", dir);
  if (!S_ISDIR(st.st_mode))
    return Error{Errc::server_error, "the data file's directory " + dir + " is not a directory"};
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return io_error("the data file's directory is not writable:", dir);
  return {};
}

Result<void> sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open directory", dir);
  bool ok = ::fsync(fd) == 0;
  int saved = errno;
  ::close(fd);
  errno = saved;
  if (!ok) return io_error("cannot fsync directory", dir);
  return {};
}

Result<void> write_file_atomically(const std::string& path, const std::string& content) {
  auto temp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create", temp);
  if (!write_all(fd, content.data(), content.size(), 0) || ::fsync(fd) != 0) {
    auto error = io_error("cannot write", temp);
    ::close(fd);
    ::unlink(temp.c_str());
    return error;
  }
  ::close(fd);
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    auto error = io_error("cannot rename " + temp + " to", path);
    ::unlink(temp.c_str());
    return error;
  }
  return sync_directory(directory_of(path));
}

Result<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot read", path);
  std::string out;
  char buffer[1 << 16];
  while (true) {
    auto n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      auto error = io_error("cannot read", path);
      ::close(fd);
      return error;
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace kinformer::apiserver::storage
