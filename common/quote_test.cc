#include "common/quote.h"

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

struct QuoteCase {
  std::string name;
  std::string in;
  std::string want;  // what Go's fmt.Sprintf("%q", in) prints
};

TEST(QuoteTest, AsGoPercentQ) {
  const QuoteCase cases[] = {
      {"empty", "", R"("")"},
      {"plain", "team-a/train", R"("team-a/train")"},
      {"quote", "a\"b", R"("a\"b")"},
      {"backslash", "a\\b\\", R"("a\\b\\")"},
      {"named escapes", "\a\b\f\n\r\t\v", R"("\a\b\f\n\r\t\v")"},
      {"forged line", "x\nuser \"root\"", R"("x\nuser \"root\"")"},
      {"nul", std::string("a\0b", 3), R"("a\x00b")"},
      {"other controls", "\x01\x1b\x1f\x7f", R"("\x01\x1b\x1f\x7f")"},
      {"space and tilde pass", " ~'`", R"(" ~'`")"},
      // UTF-8 passes through.
      {"two bytes", "h\xc3\xa9", "\"h\xc3\xa9\""},
      {"three bytes", "\xe2\x82\xac", "\"\xe2\x82\xac\""},
      {"four bytes", "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},
      {"replacement char", "\xef\xbf\xbd", "\"\xef\xbf\xbd\""},
      // Invalid UTF-8: each byte that starts no valid sequence as \xNN.
      {"lone byte", "a\xff", R"("a\xff")"},
      {"continuation alone", "\x80", R"("\x80")"},
      {"truncated", "\xc3", R"("\xc3")"},
      {"truncated then ascii", "\xe2\x82z", R"("\xe2\x82z")"},
      {"overlong", "\xc0\x80", R"("\xc0\x80")"},
      {"overlong three", "\xe0\x80\xaf", R"("\xe0\x80\xaf")"},
      {"surrogate", "\xed\xa0\x80", R"("\xed\xa0\x80")"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", R"("\xf4\x90\x80\x80")"},
      {"F5", "\xf5\x80\x80\x80", R"("\xf5\x80\x80\x80")"},
      // Valid but invisible: C1 controls, spaces, separators, format.
      {"NEL", "\xc2\x85", R"("\u0085")"},
      {"NBSP", "a\xc2\xa0z", R"("a\u00a0z")"},
      {"soft hyphen", "\xc2\xad", R"("\u00ad")"},
      {"zero width space", "\xe2\x80\x8b", R"("\u200b")"},
      {"line separator", "\xe2\x80\xa8", R"("\u2028")"},
      {"right-to-left override", "\xe2\x80\xae", R"("\u202e")"},
      {"isolate", "\xe2\x81\xa6", R"("\u2066")"},
      {"ideographic space", "\xe3\x80\x80", R"("\u3000")"},
      {"byte order mark", "\xef\xbb\xbf", R"("\ufeff")"},
  };
  for (const QuoteCase& c : cases) {
    EXPECT_EQ(Quote(c.in), c.want) << c.name;
    std::string appended = "prefix ";
    AppendQuoted(&appended, c.in);
    EXPECT_EQ(appended, "prefix " + c.want) << c.name;
    // And back.
    const std::string text = c.want + " rest";
    absl::string_view rest = text;
    std::string back;
    EXPECT_TRUE(ConsumeQuoted(&rest, &back)) << c.name;
    EXPECT_EQ(back, c.in) << c.name;
    EXPECT_EQ(rest, " rest") << c.name;
  }
}

TEST(ConsumeQuotedTest, HexEscapeIsTwoDigits) {
  absl::string_view text = R"("\x01a\u00e9b": x)";
  std::string out;
  ASSERT_TRUE(ConsumeQuoted(&text, &out));
  EXPECT_EQ(out,
            "\x01"
            "a\xc3\xa9"
            "b");
  EXPECT_EQ(text, ": x");
}

TEST(ConsumeQuotedTest, RefusesWhatQuoteDoesNotMake) {
  for (absl::string_view bad :
       {"", "x", R"(x"a")", R"("open)", R"("a\")", R"("\q")", R"("\x4")",
        R"("\xzz")", R"("\u12")", R"("\ud800")", "\"a\nb\""}) {
    absl::string_view text = bad;
    std::string out = "kept";
    EXPECT_FALSE(ConsumeQuoted(&text, &out)) << bad;
    EXPECT_EQ(text, bad);
    EXPECT_EQ(out, "kept");
  }
}

TEST(QuoteTest, LongInputIsEscapedWhole) {
  std::string in;
  std::string want = "\"";
  for (int i = 0; i < 100000; ++i) {
    in += "ab\n\"\xff";
    want += "ab\\n\\\"\\xff";
  }
  want += "\"";
  EXPECT_EQ(Quote(in), want);
}

TEST(QuoteListTest, AsGoPercentQOfAStringSlice) {
  EXPECT_EQ(QuoteList(std::vector<std::string>{}), "[]");
  EXPECT_EQ(QuoteList(std::vector<std::string>{"a"}), R"(["a"])");
  EXPECT_EQ(QuoteList(std::vector<std::string>{"a", "b\n", ""}),
            R"(["a" "b\n" ""])");
  EXPECT_EQ(QuoteList(std::vector<absl::string_view>{"x\"y", "\x01"}),
            R"(["x\"y" "\x01"])");
}

}  // namespace
}  // namespace jobset
