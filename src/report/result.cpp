#include "report/result.hpp"

namespace lossless::report {

std::vector<int> ActiveClasses(const fabric::PortStats& s) {
  std::vector<int> out;
  for (int c = 0; c < fabric::kMaxClasses; ++c)
    if (s.classes[static_cast<size_t>(c)].Any()) out.push_back(c);
  return out;
}

}  // namespace lossless::report
