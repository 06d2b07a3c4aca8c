// SPDX-License-Identifier: Apache-2.0
// validate_filter() on hand-made programs: each rule refuses what breaks it,
// naming the instruction, and lets through the programs next to it; and
// programs it accepts decide as libpcap's bpf_filter() does, also where a
// run ends early (division by a zero X, loads past the capture, shifts by
// 32 or more).
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <string>
#include <vector>

#include "filter_frames.hpp"
#include "gnio/filter.hpp"

using namespace gnio;

namespace {

using Program = std::vector<dev::BpfInsn>;

// pcap/bpf.h's BPF_STMT and BPF_JUMP make libpcap's struct bpf_insn
// initialisers, which dev::BpfInsn shares field for field.
Program prog(std::initializer_list<bpf_insn> insns) {
  Program p;
  for (const bpf_insn& i : insns) p.push_back({i.code, i.jt, i.jf, i.k});
  return p;
}

struct Refusal {
  const char* rule;
  Program program;
  const char* says;  // a phrase of the message
  size_t at;         // the instruction it names
};

std::vector<Refusal> refusals() {
  const bpf_insn ret1 = BPF_STMT(BPF_RET | BPF_K, 1);
  return {
      {"unknown opcode", prog({BPF_STMT(0xff, 0), ret1}), "opcode the device interpreter does not run", 0},
      {"unknown opcode no path reaches", prog({BPF_STMT(BPF_JMP | BPF_JA, 1), BPF_STMT(0xff, 0), ret1}), "opcode", 1},
      {"ret x", prog({BPF_STMT(BPF_RET | BPF_X, 0)}), "opcode the device interpreter does not run", 0},
      {"ld of a half word immediate", prog({BPF_STMT(BPF_LD | BPF_H | BPF_IMM, 1), ret1}), "opcode", 0},
      {"ldx of an absolute word", prog({BPF_STMT(BPF_LDX | BPF_W | BPF_ABS, 1), ret1}), "opcode", 0},
      {"neg of x", prog({BPF_STMT(BPF_ALU | BPF_NEG | BPF_X, 0), ret1}), "opcode", 0},
      {"alu operation 0xb0", prog({BPF_STMT(BPF_ALU | 0xb0 | BPF_K, 1), ret1}), "opcode", 0},
      {"jump operation 0x50", prog({BPF_JUMP(BPF_JMP | 0x50 | BPF_K, 1, 0, 0), ret1, ret1}), "opcode", 0},
      {"misc 0x40", prog({BPF_STMT(BPF_MISC | 0x40, 0), ret1}), "opcode", 0},
      {"code above 8 bits", prog({BPF_STMT(0x106, 0)}), "opcode", 0},
      {"ancillary VLAN tag present", prog({BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0xfffff000u + 44), ret1}),
       "Linux's negative offsets", 0},
      {"SKF_NET_OFF indirect", prog({BPF_STMT(BPF_LD | BPF_H | BPF_IND, 0xfff00000u), ret1}), "SKF_AD_OFF", 0},
      {"SKF_LL_OFF", prog({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0xffe00000u), ret1}), "negative offsets", 0},
      {"jt past the end", prog({BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), ret1}), "its jt goes to instruction 2",
       0},
      {"jf past the end", prog({BPF_JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 5), ret1}), "its jf goes to instruction 6",
       0},
      {"ja past the end", prog({BPF_STMT(BPF_LD | BPF_IMM, 0), BPF_STMT(BPF_JMP | BPF_JA, 1), ret1}),
       "its jump goes to instruction 3, past the last (2)", 1},
      {"ja far past the end", prog({BPF_STMT(BPF_JMP | BPF_JA, 0x7fffffffu), ret1}), "past the last", 0},
      {"ja backwards", prog({ret1, BPF_STMT(BPF_JMP | BPF_JA, 0xfffffffeu), ret1}), "jumps back by 2", 1},
      {"ja to itself", prog({BPF_STMT(BPF_JMP | BPF_JA, 0xffffffffu), ret1}), "forward jumps only", 0},
      {"no ret at the end", prog({BPF_STMT(BPF_LD | BPF_IMM, 1)}), "is the last instruction and not a ret", 0},
      {"a path runs off the end", prog({BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), ret1, BPF_STMT(BPF_MISC | BPF_TAX, 0)}),
       "not a ret", 2},
      {"st of word 16", prog({BPF_STMT(BPF_ST, 16), ret1}), "scratch memory word 16; there are 16 (0..15)", 0},
      {"stx of word 99", prog({BPF_STMT(BPF_STX, 99), ret1}), "word 99", 0},
      {"ld of word 20", prog({BPF_STMT(BPF_LD | BPF_MEM, 20), ret1}), "word 20", 0},
      {"ldx of word 16", prog({BPF_STMT(BPF_LDX | BPF_MEM, 16), ret1}), "word 16", 0},
      {"ld of a word never stored", prog({BPF_STMT(BPF_LD | BPF_MEM, 3), BPF_STMT(BPF_RET | BPF_A, 0)}),
       "loads scratch memory word 3 where some path to it has not stored it", 0},
      {"ld of a word stored on one path only",
       prog({BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), BPF_STMT(BPF_ST, 5), BPF_STMT(BPF_LDX | BPF_MEM, 5),
             BPF_STMT(BPF_RET | BPF_A, 0)}),
       "word 5 where some path", 2},
      {"ld of another word than stored", prog({BPF_STMT(BPF_ST, 1), BPF_STMT(BPF_LD | BPF_MEM, 2), ret1}), "word 2", 1},
      {"div by constant 0", prog({BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), ret1}), "divides by the constant 0", 0},
      {"mod by constant 0", prog({BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 0), ret1}), "divides by the constant 0", 0},
      {"lsh by 32", prog({BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32), ret1}), "shifts by the constant 32; at most 31", 0},
      {"rsh by 40", prog({BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 40), ret1}), "shifts by the constant 40", 0},
  };
}

TEST(FilterValidate, EachRuleRefusesNamingTheInstruction) {
  for (const Refusal& r : refusals()) {
    const Status s = validate_filter(r.program);
    ASSERT_FALSE(s.is_ok()) << r.rule << " was accepted";
    EXPECT_EQ(s.code(), Errc::InvalidValue) << r.rule;
    EXPECT_NE(s.message().find(r.says), std::string::npos) << r.rule << ": " << s.message();
    const std::string at = "instruction " + std::to_string(r.at) + " of " + std::to_string(r.program.size()) + " (";
    EXPECT_NE(s.message().find(at), std::string::npos) << r.rule << ": " << s.message();
  }
}

TEST(FilterValidate, LengthIsBounded) {
  EXPECT_NE(validate_filter({}).message().find("0 instructions"), std::string::npos);
  Program longest(dev::bpf::kMaxInsns, {BPF_LD | BPF_IMM, 0, 0, 7});
  longest.back() = {BPF_RET | BPF_A, 0, 0, 0};
  EXPECT_TRUE(validate_filter(longest)) << validate_filter(longest).to_string();
  longest.insert(longest.begin(), {BPF_LD | BPF_IMM, 0, 0, 7});
  const Status s = validate_filter(longest);
  EXPECT_EQ(s.code(), Errc::InvalidValue);
  EXPECT_NE(s.message().find("4097 instructions is longer than the 4096"), std::string::npos) << s.message();
}

TEST(FilterValidate, AcceptsTheProgramsNextToEachRefusal) {
  const bpf_insn ret_a = BPF_STMT(BPF_RET | BPF_A, 0);
  const std::vector<Program> fine = {
      prog({BPF_STMT(BPF_RET | BPF_K, 0)}),
      prog({BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0), ret_a}),                    // jt, jf land on the last
      prog({BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0xffdfffffu), ret_a}),                 // just under SKF_LL_OFF
      prog({BPF_STMT(BPF_ST, 15), BPF_STMT(BPF_LDX | BPF_MEM, 15), ret_a}),
      prog({BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), BPF_STMT(BPF_ST, 5), BPF_STMT(BPF_STX, 5),
            BPF_STMT(BPF_LD | BPF_MEM, 5), ret_a}),  // stored on both paths
      prog({BPF_STMT(BPF_JMP | BPF_JA, 1), BPF_STMT(BPF_LD | BPF_MEM, 9), ret_a}),  // the load no path reaches
      prog({BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 7), ret_a}),
      prog({BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 31), BPF_STMT(BPF_ALU | BPF_RSH | BPF_X, 0), ret_a}),
  };
  for (size_t i = 0; i < fine.size(); ++i) {
    const Status s = validate_filter(fine[i]);
    EXPECT_TRUE(s.is_ok()) << "program " << i << ": " << s.to_string();
  }
}

TEST(FilterValidate, LoadRefusesWhatValidateRefuses) {
  auto gpu = Gpu::open("cpu");
  ASSERT_TRUE(gpu.has_value()) << gpu.status().to_string();
  auto bad = FilterProgram::load(*gpu, prog({BPF_STMT(BPF_LD | BPF_IMM, 1)}));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("not a ret"), std::string::npos);
  auto good = FilterProgram::load(*gpu, prog({BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0), BPF_STMT(BPF_RET | BPF_A, 0)}));
  ASSERT_TRUE(good.has_value()) << good.status().to_string();
  const uint8_t pkt[4] = {};
  EXPECT_EQ(good->handle().run(pkt, 4, 1234), 1234u);
  EXPECT_TRUE(good->expression().empty());
}

// Programs that exercise every opcode the interpreter runs, decided by the
// interpreter and by libpcap's bpf_filter() on frames of several lengths.
TEST(FilterValidate, AcceptedProgramsDecideAsBpfFilter) {
  const bpf_insn ret_a = BPF_STMT(BPF_RET | BPF_A, 0);
  const std::vector<Program> programs = {
      // X = IPv4 header length; A = the byte after it, times 3, minus 1, xor 0x55, or 0x100, and 0x1ff
      prog({BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14), BPF_STMT(BPF_LD | BPF_B | BPF_IND, 14),
            BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 3), BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 1),
            BPF_STMT(BPF_ALU | BPF_XOR | BPF_K, 0x55), BPF_STMT(BPF_ALU | BPF_OR | BPF_K, 0x100),
            BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x1ff), ret_a}),
      // A = wirelen / X where X = the byte at 20 (0: the run ends with 0)
      prog({BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0), BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 20), BPF_STMT(BPF_MISC | BPF_TAX, 0),
            BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0), BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), ret_a}),
      // A = wirelen % X, X the byte at 23
      prog({BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23), BPF_STMT(BPF_MISC | BPF_TAX, 0), BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
            BPF_STMT(BPF_ALU | BPF_MOD | BPF_X, 0), ret_a}),
      // shifts by X from the packet: 32 and more give 0
      prog({BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14), BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 26),
            BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0), BPF_STMT(BPF_ST, 0), BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 26),
            BPF_STMT(BPF_ALU | BPF_RSH | BPF_X, 0), BPF_STMT(BPF_LDX | BPF_MEM, 0), BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
            BPF_STMT(BPF_ALU | BPF_NEG, 0), ret_a}),
      // jumps on X: A (ethertype) > X (its low byte), >=, ==, & ; then word and half-word indirect loads
      prog({BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12), BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 13),
            BPF_JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 5), BPF_JUMP(BPF_JMP | BPF_JGE | BPF_X, 0, 0, 4),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 3, 0, 0), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_X, 0, 2, 0),
            BPF_STMT(BPF_LD | BPF_W | BPF_IND, 10), ret_a, BPF_STMT(BPF_LD | BPF_H | BPF_IND, 30),
            BPF_STMT(BPF_MISC | BPF_TXA, 0), ret_a}),
      // constant jumps and a ret of k
      prog({BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x10, 3, 0),
            BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 6, 0, 1), BPF_STMT(BPF_RET | BPF_K, 77), BPF_STMT(BPF_LDX | BPF_IMM, 9),
            BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 0xfffffff0u), BPF_STMT(BPF_STX, 7), BPF_STMT(BPF_LD | BPF_MEM, 7),
            BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 3), BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 31), ret_a}),
  };
  const auto frames = filter_test::hand_built_frames();
  uint64_t nonzero = 0, zero = 0;
  for (size_t pi = 0; pi < programs.size(); ++pi) {
    const Program& p = programs[pi];
    ASSERT_TRUE(validate_filter(p)) << "program " << pi << ": " << validate_filter(p).to_string();
    std::vector<bpf_insn> theirs;
    for (const auto& i : p) theirs.push_back({i.code, i.jt, i.jf, i.k});
    const dev::FilterRef r(p.data(), static_cast<uint32_t>(p.size()));
    for (const auto& f : frames)
      for (uint32_t cap : {static_cast<uint32_t>(f.size()), 40u, 27u, 24u, 21u, 14u, 13u, 0u}) {
        if (cap > f.size()) continue;
        const auto wire = static_cast<uint32_t>(f.size());
        const uint32_t want = bpf_filter(theirs.data(), f.data(), wire, cap);
        EXPECT_EQ(r.run(f.data(), cap, wire), want) << "program " << pi << ", caplen " << cap;
        (want ? nonzero : zero) += 1;
      }
  }
  EXPECT_GT(nonzero, 1000u);
  EXPECT_GT(zero, 1000u);
}

}  // namespace
