#pragma once
// Writing an output file whole or not at all.
#include <string>
#include <string_view>

#include "base/error.hpp"

namespace lossless {

// Writes `text` to a new temporary file in `path`'s folder and renames it to
// `path`, so a reader never sees a half-written file and a failure leaves an
// existing `path` as it was (no temporary file is left behind). The file gets
// mode 0644. A `path` that exists and is not a regular file (/dev/null,
// /dev/full, a FIFO) is written in place, never replaced. Throws InputError at `where` ("cannot
// write the file: <reason>") when the folder is missing or not writable, `path` is a folder, or the
// disk is full.
void WriteFileAtomically(const std::string& path, std::string_view text, const Location& where);

// An output named on the command line or in a scenario (docs/errors.md#output-files):
// "-" is standard output; anything else goes through WriteFileAtomically
// (a device or FIFO written in place, never replaced). Every write error
// (a full disk, /dev/full, a closed stdout) throws InputError at `where`
// ("cannot write the file: <reason>").
void WriteOutput(const std::string& path, std::string_view text, const Location& where);

// An output written piece by piece (a packet capture too large to hold in
// memory) with WriteOutput's guarantees: "-" is standard output; a device or
// FIFO is written in place; anything else goes to a temporary file beside
// `path` that Commit() renames over it, so a reader never sees half a file.
// Destroyed without Commit(), it removes the temporary file. Every error
// throws InputError at `where` ("cannot write the file: <reason>").
class OutputStream {
 public:
  OutputStream(std::string path, Location where);
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  void Write(std::string_view bytes);
  void Commit();

 private:
  [[noreturn]] void Fail(int err);
  std::string path_, tmp_;
  Location where_;
  int fd_ = -1;
  bool committed_ = false;
};

// Before the work that produces an output: InputError at `where` when `path`
// cannot be written (a folder, a missing or read-only folder, a file without
// write permission), so that a long run does not end in that error. "" and
// "-" pass. Leaves no file behind.
void CheckOutputPath(const std::string& path, const Location& where);

}  // namespace lossless
