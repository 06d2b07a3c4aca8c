// SPDX-License-Identifier: Apache-2.0
// Queue-spec parsing and open_backend() dispatch errors.
#include "backends/spec.hpp"

#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <filesystem>

#include "test_util.hpp"

namespace gnio::backend {
namespace {

using ::testing::HasSubstr;

TEST(Spec, SplitsDriverArgumentAndOptions) {
  auto s = Spec::parse("pcap:/tmp/a=b.pcap,loop=3,pps=2.5", ArgMode::Required, {"loop", "pps"});
  ASSERT_TRUE(s) << s.status().to_string();
  EXPECT_EQ(s->driver(), "pcap");
  EXPECT_EQ(s->arg(), "/tmp/a=b.pcap");
  EXPECT_EQ(s->u64("loop", 1, 0, 10).value(), 3u);
  EXPECT_DOUBLE_EQ(s->rate("pps", 1e6).value(), 2.5);

  auto none = Spec::parse("synthetic:", ArgMode::None, {"count"});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->u64("count", 7, 0, 10).value(), 7u);
  EXPECT_EQ(none->rate("pps", 1e6).value(), 0.0);

  auto optional = Spec::parse("loop:queues=2", ArgMode::Optional, {"queues"});
  ASSERT_TRUE(optional);
  EXPECT_EQ(optional->arg(), "");
  auto named = Spec::parse("loop:wire0,queues=2", ArgMode::Optional, {"queues"});
  ASSERT_TRUE(named);
  EXPECT_EQ(named->arg(), "wire0");
}

TEST(Spec, UnknownKeyNamesKeyValueAndAcceptedKeys) {
  auto s = open_backend("synthetic:cout=5");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), Errc::InvalidValue);
  EXPECT_EQ(s.status().layer(), Layer::Backend);
  EXPECT_THAT(s.status().message(), HasSubstr("'cout'"));
  EXPECT_THAT(s.status().message(), HasSubstr("'5'"));
  EXPECT_THAT(s.status().message(), HasSubstr("count, size, flows, seed, proto, ipv6, pps, queues"));
}

TEST(Spec, BadValuesNameOptionValueAndRange) {
  struct Case {
    const char* spec;
    const char* expect;
  };
  const Case cases[] = {
      {"synthetic:count=abc", "count=abc is not a whole number"},
      {"synthetic:count=-1", "count=-1 is not a whole number"},
      {"synthetic:flows=0", "flows=0 is out of range; use flows=N with 1 <= N <= 1048576"},
      {"synthetic:queues=99999999999999999999", "queues=99999999999999999999 is out of range"},
      {"synthetic:proto=sctp", "proto=sctp is not an accepted value; accepted values: udp, tcp, icmp, mix"},
      {"synthetic:pps=fast", "pps=fast is not a number"},
      {"synthetic:pps=0", "pps=0 is out of range"},
      {"synthetic:size=40", "size=40 is out of range; use size=N or size=MIN-MAX with 50 <= N <= 9216"},
      {"synthetic:size=60,proto=tcp,ipv6=1", "size=60 is out of range; use size=N or size=MIN-MAX with 82"},
      {"synthetic:size=200-100", "size=200-100 is a range whose MIN is above its MAX"},
      {"synthetic:size=64-", "size=64- is not a size or a MIN-MAX range"},
      {"synthetic:count=1,count=2", "option 'count' is given twice"},
      {"synthetic:count", "field 'count' is not of the form key=value"},
      {"loop:,depth=0", "depth=0 is out of range"},
      {"pcap:", "driver 'pcap' needs an argument"},
      {"pcap-out:/tmp/x.pcap,snaplen=10", "snaplen=10 is out of range; use snaplen=N with 64 <= N <= 262144"},
  };
  for (const Case& c : cases) {
    auto b = open_backend(c.spec);
    ASSERT_FALSE(b) << c.spec;
    EXPECT_EQ(b.status().code(), Errc::InvalidValue) << c.spec;
    EXPECT_THAT(b.status().message(), HasSubstr(c.expect)) << c.spec;
    EXPECT_THAT(b.status().message(), HasSubstr(c.spec)) << "the message quotes the spec";
  }
}

TEST(Spec, QuotedFieldsKeepTheirCommas) {
  auto s = Spec::parse("pcap:\"/tmp/a,b=c.pcap\",loop=3", ArgMode::Required, {"loop", "pps"});
  ASSERT_TRUE(s) << s.status().to_string();
  EXPECT_EQ(s->arg(), "/tmp/a,b=c.pcap");
  EXPECT_EQ(s->u64("loop", 1, 0, 10).value(), 3u);

  auto escaped = Spec::parse(R"(pcap:"a\"b\\c,d")", ArgMode::Required, {});
  ASSERT_TRUE(escaped) << escaped.status().to_string();
  EXPECT_EQ(escaped->arg(), R"(a"b\c,d)");

  // A quoted first field is the argument even where it holds '='.
  auto optional = Spec::parse("loop:\"x=y\",queues=2", ArgMode::Optional, {"queues"});
  ASSERT_TRUE(optional) << optional.status().to_string();
  EXPECT_EQ(optional->arg(), "x=y");
  EXPECT_EQ(optional->u64("queues", 1, 1, 8).value(), 2u);

  auto value = Spec::parse("synthetic:proto=\"tcp\",count=\"5\"", ArgMode::None, {"proto", "count"});
  ASSERT_TRUE(value) << value.status().to_string();
  EXPECT_EQ(value->choice("proto", "udp", {"udp", "tcp"}).value(), "tcp");
  EXPECT_EQ(value->u64("count", 1, 0, 10).value(), 5u);
}

TEST(Spec, QuoteErrorsSayWhatToWrite) {
  struct Case {
    const char* spec;
    const char* expect;
  };
  const Case cases[] = {
      {"pcap:\"a,b.pcap", "the double quote before 'a,b.pcap' is not closed"},
      {"pcap:\"a\"b,loop=2", "text 'b' after the quoted 'a'"},
      {"pcap:a\"b\"", "a double quote inside field 'a\"...'"},
      {"synthetic:\"count=5\"", "field 'count=5' is not of the form key=value"},
      // An unquoted comma in a file name: the message shows the quoted spec.
      {"pcap:/tmp/a,b.pcap,loop=2", "put the argument in double quotes: 'pcap:\"/tmp/a,b.pcap\",loop=2'"},
      {"pcap:/tmp/a,b,c.pcap", "'pcap:\"/tmp/a,b,c.pcap\"'"},
      {"pcap:/tmp/x,y=z.pcap", "unknown option 'y' (value 'z.pcap')"},
      {"pcap:/tmp/x,y=z.pcap", "'pcap:\"/tmp/x,y=z.pcap\"'"},
  };
  for (const Case& c : cases) {
    auto b = open_backend(c.spec);
    ASSERT_FALSE(b) << c.spec;
    EXPECT_EQ(b.status().code(), Errc::InvalidValue) << c.spec;
    EXPECT_THAT(b.status().message(), HasSubstr(c.expect)) << c.spec;
  }
  // No such advice for a driver without an argument.
  auto none = open_backend("synthetic:count=5,x");
  ASSERT_FALSE(none);
  EXPECT_THAT(none.status().message(), ::testing::Not(HasSubstr("double quotes")));
}

TEST(Spec, PcapFileWithACommaInItsName) {
  auto dir = std::filesystem::path(::testing::TempDir()) / "gnio spec,test";
  std::filesystem::create_directories(dir);
  auto copy = dir / "sample,copy.pcap";
  std::filesystem::copy_file(testing::data_path("sample.pcap"), copy, std::filesystem::copy_options::overwrite_existing);
  auto b = testing::open_ok("pcap:\"" + copy.string() + "\",loop=2");
  ASSERT_TRUE(b);
  EXPECT_EQ(testing::drain(*b, 0).size(), 2 * 226u);
  std::filesystem::remove_all(dir);
}

TEST(Spec, UnknownDriverListsKnownDrivers) {
  auto b = open_backend("dpdkk:0000:01:00.0");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::InvalidValue);
  EXPECT_THAT(b.status().message(), HasSubstr("unknown driver 'dpdkk'"));
  EXPECT_THAT(b.status().message(),
              HasSubstr("known drivers: pcap, pcap-out, pcapng-out, synthetic, loop, afxdp, dpdk, fault, mem, null "));
}

}  // namespace
}  // namespace gnio::backend
