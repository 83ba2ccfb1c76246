#pragma once
// Where the audit commands' reports go (audit qos, optics status/quarantine):
// standard output, or a file written whole or not at all. Write errors are
// errors (exit 2), never a silent exit 0 with nothing written.
#include <string>
#include <string_view>

namespace lossless::cli {

// Control characters of `text` other than newline and tab (ESC of an ANSI
// sequence, CR, ...) as visible escapes (\r, \xHH): reports quote input
// (link names, skipped lines) and must not drive the terminal (issue 16,
// item 14).
std::string EscapeControls(std::string_view text);

// Writes `raw` (through EscapeControls) to standard output when `path` is empty or "-", else to
// `path`: a regular file (or a new one) through WriteFileAtomically, a
// device or pipe that exists (/dev/stdout, a FIFO) directly. Throws
// InputError at {path or "<stdout>", 0, flag} when the write fails (a full
// disk, /dev/full, a closed pipe).
void WriteReport(const std::string& path, std::string_view raw, const char* flag);

// Creates the output folder `dir` (-o) if needed and checks that a file can
// be written in it, before any work runs; InputError at {dir, 0, "-o"}.
void PrepareOutputDir(const std::string& dir);

// Flushes standard output; throws InputError at {"<stdout>", 0, flag} when
// anything written to it so far failed.
void FlushStdout(const char* flag);

}  // namespace lossless::cli
