#include "base/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace lossless {

namespace {
bool IsReplaceable(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  return st.type() == std::filesystem::file_type::not_found ||
         st.type() == std::filesystem::file_type::regular;
}
}  // namespace

void WriteFileAtomically(const std::string& path, std::string_view text, const Location& where) {
  auto fail = [&](int err) {
    throw InputError(where, std::string("cannot write the file: ") + std::strerror(err));
  };
  if (!IsReplaceable(path)) {
    // A device, FIFO or socket: written in place. Renaming a file over it
    // would replace /dev/full or /dev/null itself when run as root.
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) fail(errno);
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int err = errno;
    if (std::fclose(f) != 0 || !ok) fail(ok ? errno : err);
    return;
  }
  const std::filesystem::path dest(path);
  const std::filesystem::path dir = dest.has_parent_path() ? dest.parent_path() : ".";
  // Appended piece by piece: GCC 12 warns (-Wrestrict) on the one-expression form.
  std::string tmp = dir.string();
  tmp += "/.";
  tmp += dest.filename().string();
  tmp += ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(errno);
  int err = 0;
  for (size_t done = 0; err == 0 && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
    } else {
      done += static_cast<size_t>(n);
    }
  }
  // mkstemp creates the file 0600: an output is for reading, like any other.
  if (err == 0 && ::fchmod(fd, 0644) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    fail(err);
  }
}

void WriteOutput(const std::string& path, std::string_view text, const Location& where) {
  auto fail = [&](int err) {
    throw InputError(where, std::string("cannot write the file: ") + std::strerror(err));
  };
  if (path == "-") {
    std::fflush(stdout);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      fail(errno);
    return;
  }
  WriteFileAtomically(path, text, where);
}

OutputStream::OutputStream(std::string path, Location where)
    : path_(std::move(path)), where_(std::move(where)) {
  if (path_ == "-") {
    std::fflush(stdout);
    fd_ = STDOUT_FILENO;
    return;
  }
  if (!IsReplaceable(path_)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) Fail(errno);
    return;
  }
  const std::filesystem::path dest(path_);
  const std::filesystem::path dir = dest.has_parent_path() ? dest.parent_path() : ".";
  tmp_ = dir.string();
  tmp_ += "/.";
  tmp_ += dest.filename().string();
  tmp_ += ".XXXXXX";
  fd_ = ::mkstemp(tmp_.data());
  if (fd_ < 0) {
    tmp_.clear();
    Fail(errno);
  }
}

OutputStream::~OutputStream() {
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  if (!committed_ && !tmp_.empty()) std::remove(tmp_.c_str());
}

void OutputStream::Fail(int err) {
  throw InputError(where_, std::string("cannot write the file: ") + std::strerror(err));
}

void OutputStream::Write(std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Fail(n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
}

void OutputStream::Commit() {
  if (fd_ == STDOUT_FILENO) {
    committed_ = true;
    return;
  }
  if (tmp_.empty()) {  // a device, written in place
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) Fail(errno);
    committed_ = true;
    return;
  }
  int err = ::fchmod(fd_, 0644) != 0 ? errno : 0;  // mkstemp makes it 0600
  if (::close(fd_) != 0 && err == 0) err = errno;
  fd_ = -1;
  if (err == 0 && std::rename(tmp_.c_str(), path_.c_str()) != 0) err = errno;
  if (err != 0) Fail(err);  // the destructor removes the temporary file
  committed_ = true;
}

void CheckOutputPath(const std::string& path, const Location& where) {
  if (path.empty() || path == "-") return;
  auto fail = [&](const char* why) {
    throw InputError(where, std::string("cannot write the file: ") + why);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("it is a folder");
  if (!IsReplaceable(path)) {
    if (::access(path.c_str(), W_OK) != 0) fail(std::strerror(errno));
    return;
  }
  // What WriteFileAtomically needs: a writable folder (it creates the file
  // there) and, for an existing file, permission to replace what the user
  // cannot write to.
  const std::filesystem::path dest(path);
  const std::string dir = dest.has_parent_path() ? dest.parent_path().string() : ".";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) fail(std::strerror(errno));
  if (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    fail(std::strerror(errno));
}

}  // namespace lossless
