#include "formats/topo_matrix.hpp"

#include <algorithm>
#include <istream>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"

namespace lossless::formats {
namespace {

constexpr size_t kMaxLineChars = size_t{16} * 1024;
constexpr int64_t kMaxLines = 100'000;

// This parser's blanks: text::kLineBlanks (white space but '\n').
std::string Trim(std::string_view s) {
  return std::string(text::Trim(s, text::kLineBlanks));
}

std::vector<std::string> SplitWs(std::string_view s) {
  std::vector<std::string_view> words = text::SplitWhitespace(s, text::kLineBlanks);
  return std::vector<std::string>(words.begin(), words.end());
}

// Cells of a row: tab-separated when the line has tabs (empty cells dropped),
// else whitespace-separated.
std::vector<std::string> Cells(const std::string& line) {
  if (line.find('\t') == std::string::npos) return SplitWs(line);
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= line.size()) {
    size_t tab = line.find('\t', start);
    if (tab == std::string::npos) tab = line.size();
    std::string c = Trim(std::string_view(line).substr(start, tab - start));
    if (!c.empty()) out.push_back(std::move(c));
    start = tab + 1;
  }
  return out;
}

bool IsAffinityLabel(const std::string& s) {
  return s == "CPU Affinity" || s == "NUMA Affinity" || s == "GPU NUMA ID" || s == "NUMA";
}

// Header cells; with spaces instead of tabs the multi-word labels are rejoined.
std::vector<std::string> HeaderCells(const std::string& line) {
  if (line.find('\t') != std::string::npos) return Cells(line);
  std::vector<std::string> w = SplitWs(line), out;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == "CPU" && i + 1 < w.size() && w[i + 1] == "Affinity") {
      out.emplace_back("CPU Affinity");
      ++i;
    } else if (w[i] == "NUMA" && i + 1 < w.size() && w[i + 1] == "Affinity") {
      out.emplace_back("NUMA Affinity");
      ++i;
    } else if (w[i] == "GPU" && i + 2 < w.size() && w[i + 1] == "NUMA" && w[i + 2] == "ID") {
      out.emplace_back("GPU NUMA ID");
      i += 2;
    } else {
      out.push_back(w[i]);
    }
  }
  return out;
}

bool IsIndexed(const std::string& s, std::string_view prefix) {
  if (s.size() <= prefix.size() || s.compare(0, prefix.size(), prefix) != 0) return false;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(prefix.size()), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool IsDeviceName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

std::optional<TopoCell> ParseCell(const std::string& t) {
  TopoCell c;
  c.text = t;
  if (t == "X") {
    c.link = TopoLink::kSelf;
  } else if (t == "PIX") {
    c.link = TopoLink::kPix;
  } else if (t == "PXB") {
    c.link = TopoLink::kPxb;
  } else if (t == "PHB") {
    c.link = TopoLink::kPhb;
  } else if (t == "NODE") {
    c.link = TopoLink::kNode;
  } else if (t == "SYS" || t == "SOC") {
    c.link = TopoLink::kSys;
  } else if (IsIndexed(t, "NV") && t.size() <= 5) {
    c.link = TopoLink::kNvLink;
    c.nvlinks = std::stoll(t.substr(2));
    if (c.nvlinks < 1) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return c;
}

class LineReader {
 public:
  LineReader(std::istream& in, const std::string& file) : in_(in), file_(file) {}
  // False at end of input.
  bool Next(std::string& line) {
    line.clear();
    if (!in_) return false;
    int ch;
    bool any = false;
    while ((ch = in_.get()) != EOF) {
      any = true;
      if (ch == '\n') break;
      if (ch == '\0')
        throw InputError({file_, line_no_ + 1, ""},
                         "binary data (NUL byte): not an nvidia-smi topo -m matrix");
      if (line.size() >= kMaxLineChars)
        throw InputError({file_, line_no_ + 1, ""},
                         "line longer than 16 KiB: not an nvidia-smi topo -m matrix");
      line += static_cast<char>(ch);
    }
    if (!any) return false;
    if (++line_no_ > kMaxLines)
      throw InputError({file_, line_no_, ""},
                       "more than 100000 lines: not an nvidia-smi topo -m matrix");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find('\x1b') != std::string::npos) line = text::StripAnsi(line);
    return true;
  }
  int64_t line_no() const { return line_no_; }

 private:
  std::istream& in_;
  const std::string& file_;
  int64_t line_no_ = 0;
};

}  // namespace

std::string_view TopoLinkName(TopoLink l) {
  switch (l) {
    case TopoLink::kSelf:
      return "X";
    case TopoLink::kNvLink:
      return "NV";
    case TopoLink::kPix:
      return "PIX";
    case TopoLink::kPxb:
      return "PXB";
    case TopoLink::kPhb:
      return "PHB";
    case TopoLink::kNode:
      return "NODE";
    case TopoLink::kSys:
      return "SYS";
  }
  return "?";
}

std::vector<size_t> TopoMatrix::Gpus() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].kind == TopoDeviceKind::kGpu) out.push_back(i);
  return out;
}

std::vector<size_t> TopoMatrix::Nics() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].kind == TopoDeviceKind::kNic) out.push_back(i);
  return out;
}

TopoMatrix ParseTopoMatrix(std::istream& in, const std::string& file) {
  TopoMatrix m;
  m.file = file;
  LineReader reader(in, file);
  std::string line;
  std::vector<std::string> affinity;  // affinity column labels in order
  bool seen_text = false, looks_nccl = false;
  int64_t nccl_line = 0;
  // 1. Header.
  while (reader.Next(line)) {
    std::vector<std::string> h = HeaderCells(line);
    if (!h.empty()) seen_text = true;
    if (!h.empty() && h[0] == "GPU0") {
      m.header_line = reader.line_no();
      for (const auto& c : h) {
        if (IsAffinityLabel(c)) {
          affinity.push_back(c);
          continue;
        }
        if (!affinity.empty())
          throw InputError({file, m.header_line, "header"},
                           Expected("affinity columns after the device columns", c));
        if (!IsDeviceName(c))
          throw InputError({file, m.header_line, "header"},
                           Expected("a device column such as GPU0 or NIC0", c));
        for (const auto& d : m.devices)
          if (d.column == c)
            throw InputError({file, m.header_line, "header"},
                             fmt::format("device column {} appears twice", QuoteForMessage(c)));
        TopoDevice d;
        d.column = c;
        d.name = c;
        d.kind = IsIndexed(c, "GPU") ? TopoDeviceKind::kGpu : TopoDeviceKind::kNic;
        m.devices.push_back(std::move(d));
      }
      break;
    }
    if (!looks_nccl && (line.find("# nThread") != std::string::npos ||
                        line.find("Avg bus bandwidth") != std::string::npos ||
                        line.find("nccl-tests") != std::string::npos ||
                        line.find("# Collective test") != std::string::npos)) {
      looks_nccl = true;
      nccl_line = reader.line_no();
    }
  }
  if (m.devices.empty()) {
    if (reader.line_no() == 0 || !seen_text)
      throw InputError({file, 1, ""}, "expected an nvidia-smi topo -m matrix, got an empty file");
    if (looks_nccl)
      throw InputError({file, nccl_line, ""},
                       "this is nccl-tests output, not an nvidia-smi topo -m matrix (use 'lossless "
                       "audit nccl')");
    throw InputError({file, reader.line_no(), ""},
                     "no nvidia-smi topo -m header found (a row of columns starting with GPU0)");
  }
  const size_t n = m.devices.size();
  // 2. One row per device, in header order.
  m.cells.resize(n);
  size_t row = 0;
  while (row < n && reader.Next(line)) {
    std::vector<std::string> c = Cells(line);
    const int64_t ln = reader.line_no();
    if (c.empty()) break;
    TopoDevice& d = m.devices[row];
    if (c[0] != d.column)
      throw InputError(
          {file, ln, "row"},
          Expected(fmt::format("the row of {} (rows follow the header order)", d.column), c[0]));
    d.line = ln;
    if (c.size() < n + 1)
      throw InputError(
          {file, ln, d.column},
          fmt::format("row has {} link cells, the header has {} device columns", c.size() - 1, n));
    for (size_t j = 0; j < n; ++j) {
      auto cell = ParseCell(c[j + 1]);
      if (!cell)
        throw InputError(
            {file, ln, d.column + "/" + m.devices[j].column},
            Expected("a link X, NV<n>, PIX, PXB, PHB, NODE or SYS (cells misaligned?)", c[j + 1]));
      if ((j == row) != (cell->link == TopoLink::kSelf))
        throw InputError({file, ln, d.column + "/" + m.devices[j].column},
                         j == row ? Expected("X on the diagonal", c[j + 1])
                                  : "X off the diagonal: rows and columns do not line up");
      m.cells[row].push_back(std::move(*cell));
    }
    size_t extra = c.size() - 1 - n;
    if (extra > affinity.size())
      throw InputError(
          {file, ln, d.column},
          fmt::format("row has {} cells after the links, the header has {} affinity columns", extra,
                      affinity.size()));
    if (d.kind == TopoDeviceKind::kGpu) {
      for (size_t k = 0; k < extra; ++k) {
        const std::string& v = c[n + 1 + k];
        if (affinity[k] == "CPU Affinity") d.cpu_affinity = v;
        if (affinity[k] == "NUMA Affinity" || affinity[k] == "NUMA") d.numa_affinity = v;
        if (affinity[k] == "GPU NUMA ID") d.gpu_numa_id = v;
      }
    }
    ++row;
  }
  if (row < n)
    throw InputError({file, reader.line_no(), "row"},
                     fmt::format("matrix ends after {} of {} rows; row {} is missing", row, n,
                                 m.devices[row].column));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (m.cells[i][j].text != m.cells[j][i].text && !(m.cells[i][j].link == m.cells[j][i].link))
        throw InputError(
            {file, m.devices[i].line, m.devices[i].column + "/" + m.devices[j].column},
            fmt::format("reads {} but {}/{} reads {}: matrix is not symmetric", m.cells[i][j].text,
                        m.devices[j].column, m.devices[i].column, m.cells[j][i].text));
    }
  }
  // 3. Legends. Only the NIC legend carries data.
  bool in_nic_legend = false;
  while (reader.Next(line)) {
    std::string t = Trim(line);
    if (t == "NIC Legend:") {
      in_nic_legend = true;
      m.nic_legend = true;
      continue;
    }
    if (!in_nic_legend || t.empty()) continue;
    size_t colon = t.find(':');
    if (colon == std::string::npos) {
      in_nic_legend = false;
      continue;
    }
    std::string col = Trim(std::string_view(t).substr(0, colon));
    std::string name = Trim(std::string_view(t).substr(colon + 1));
    auto it = std::find_if(m.devices.begin(), m.devices.end(),
                           [&](const TopoDevice& d) { return d.column == col; });
    if (it == m.devices.end() || it->kind != TopoDeviceKind::kNic) {
      throw InputError({file, reader.line_no(), "NIC legend"},
                       Expected("a NIC column of the matrix", col));
    }
    if (!IsDeviceName(name))
      throw InputError({file, reader.line_no(), col},
                       Expected("a device name such as mlx5_0", name));
    it->name = name;
  }
  return m;
}

}  // namespace lossless::formats
