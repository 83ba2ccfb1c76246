#include "base/file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace lossless {

void WriteFileAtomically(const std::string& path, std::string_view text, const Location& where) {
  auto fail = [&](int err) {
    throw InputError(where, std::string("cannot write the file: ") + std::strerror(err));
  };
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

}  // namespace lossless
