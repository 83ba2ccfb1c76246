#pragma once
// Writing an output file whole or not at all.
#include <string>
#include <string_view>

#include "base/error.hpp"

namespace lossless {

// Writes `text` to a new temporary file in `path`'s folder and renames it to
// `path`, so a reader never sees a half-written file and a failure leaves an
// existing `path` as it was (no temporary file is left behind). The file gets
// mode 0644. Throws InputError at `where` ("cannot write the file: <reason>")
// when the folder is missing or not writable, `path` is a folder, or the disk
// is full.
void WriteFileAtomically(const std::string& path, std::string_view text, const Location& where);

}  // namespace lossless
