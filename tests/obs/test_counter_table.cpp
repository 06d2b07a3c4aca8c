// SPDX-License-Identifier: Apache-2.0
// The queue-counter table of docs/OBSERVABILITY.md is the one the code
// makes from gnio/queue_counters.hpp: a counter added to the lists shows in
// the docs or this test fails, printing the table to paste.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "gnio/metrics.hpp"

namespace {

TEST(CounterTable, MatchesTheCode) {
  std::ifstream in(GNIO_OBSERVABILITY_MD);
  ASSERT_TRUE(in) << "cannot read " << GNIO_OBSERVABILITY_MD;
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string begin = "<!-- queue counters: begin -->\n", end = "<!-- queue counters: end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << GNIO_OBSERVABILITY_MD << " has no line " << begin;
  ASSERT_NE(e, std::string::npos) << GNIO_OBSERVABILITY_MD << " has no line " << end;
  ASSERT_LT(b, e);
  const std::string table = doc.substr(b + begin.size(), e - b - begin.size());
  EXPECT_EQ(table, gnio::metrics::queue_counters_markdown())
      << "replace the table between the markers of " << GNIO_OBSERVABILITY_MD << " with the one above";
}

}  // namespace
