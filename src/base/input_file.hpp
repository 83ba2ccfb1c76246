#pragma once
// Reading a user's input file as text, with the limits every reader shares
// (docs/errors.md#input-limits): a directory, an unreadable path, binary data
// and inputs above the size limit are refused with one InputError naming the
// file, before more than the limit (plus one block) is read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lossless {

// Largest input a whole-file reader accepts (scenarios, topology files, QoS
// configurations, optics captures, profiles, price files).
inline constexpr size_t kMaxInputBytes = size_t{64} << 20;
// Size of the first block, the one checked for binary data.
inline constexpr size_t kFirstBlockBytes = size_t{64} << 10;

// Throws InputError{file, line} when `block` (the first bytes of an input)
// is not text: a NUL byte (its line is named), or UTF-16 (a byte-order mark,
// or NUL at every other byte), which gets a hint to convert the file to
// UTF-8. `expected` names what the reader wanted ("a scenario").
void CheckTextBlock(std::string_view block, const std::string& file, std::string_view expected);

// The whole of `path` ("-" = standard input) as text. Reads in blocks of
// kFirstBlockBytes, checks the first block with CheckTextBlock and stops
// reading (InputError) as soon as more than `max_bytes` arrived, so
// /dev/zero or an endless pipe costs one block, not the machine.
// InputError also for a directory, a path that cannot be opened (with the
// system's reason) and a read error. Standard input is read once per process:
// later calls with "-" return the same text (thread-safe).
std::string ReadTextInput(const std::string& path, std::string_view expected,
                          size_t max_bytes = kMaxInputBytes);

// "64 MiB", "1 KiB", "100 B": a byte limit for messages.
std::string FormatByteLimit(uint64_t bytes);

}  // namespace lossless
