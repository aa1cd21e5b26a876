#include "auth/tokens.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// //common:status_matchers is not visible to //auth; these suffice.
MATCHER_P2(StatusIs, code, message, "") {
  const absl::Status& status = arg.status();
  *result_listener << "status is " << status;
  return status.code() == code &&
         ::testing::ExplainMatchResult(message, std::string(status.message()),
                                       result_listener);
}

constexpr char kUserShape[] = "[a-z0-9]{8}\\.[A-Za-z0-9]{32}";
constexpr char kJoinShape[] = "[a-z0-9]{6}\\.[a-z0-9]{16}";
constexpr char kCaHash[] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(NewUserTokenTest, HasItsShapeAndIsUnique) {
  std::set<std::string> seen;
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    const TokenParts token = NewUserToken();
    const std::string text = FormatToken(token);
    ASSERT_THAT(text, MatchesRegex(kUserShape));
    EXPECT_TRUE(seen.insert(text).second) << "repeated token";
    ids.insert(token.id);
  }
  // 36^8 ids: a repeat among 1000 has odds of about 2e-7.
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(NewJoinCredentialTest, HasKubeadmShapeAndIsUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string text = FormatToken(NewJoinCredential());
    ASSERT_THAT(text, MatchesRegex(kJoinShape));
    EXPECT_TRUE(seen.insert(text).second) << "repeated credential";
  }
}

TEST(RandomStringTest, DrawsOnlyFromTheAlphabetAndCoversIt) {
  EXPECT_EQ(RandomString(0, "abc"), "");
  EXPECT_EQ(RandomString(-5, "abc"), "");
  EXPECT_EQ(RandomString(5, ""), "");
  EXPECT_EQ(RandomString(7, "x"), "xxxxxxx");

  // 36 characters: 256 is no multiple of 36, where a modulo would be biased.
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const std::string text = RandomString(36000, alphabet);
  ASSERT_EQ(text.size(), 36000u);
  std::map<char, int> counts;
  for (char c : text) {
    ASSERT_NE(alphabet.find(c), std::string::npos) << c;
    ++counts[c];
  }
  // Each character is expected 1000 times (sd about 31); these bounds are
  // more than 10 sd away, so they only fail when something is broken.
  EXPECT_EQ(counts.size(), alphabet.size());
  for (const auto& [c, n] : counts) {
    EXPECT_GT(n, 650) << c;
    EXPECT_LT(n, 1350) << c;
  }
  // Alphabets past 256 characters still work.
  std::string large;
  for (int i = 0; i < 300; ++i)
    large.push_back(static_cast<char>('a' + i % 26));
  EXPECT_EQ(RandomString(100, large).size(), 100u);
}

TEST(ParseTokenTest, RoundTripsBothShapes) {
  for (const TokenParts& token : {NewUserToken(), NewJoinCredential()}) {
    absl::StatusOr<TokenParts> parsed = ParseToken(FormatToken(token));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->id, token.id);
    EXPECT_EQ(parsed->secret, token.secret);
  }
  absl::StatusOr<TokenParts> parsed = ParseToken("abcdef.0123456789abcdef");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->id, "abcdef");
  EXPECT_EQ(parsed->secret, "0123456789abcdef");
}

TEST(ParseTokenTest, RefusesEveryOtherShapeWithoutEchoingIt) {
  const std::string user_secret = "SecretSecretSecretSecretSecret99";  // 32
  const std::string join_secret = "s3cr3ts3cr3ts3cr";                  // 16
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {"abcdef" + join_secret, "no '.'"},
      {"abcdef." + join_secret + ".x", "secret of 16"},
      {"abcdef.." + join_secret, "secret of 16"},
      {"." + join_secret, "id must be 6 or 8"},
      {"abcdef.", "secret of 16"},
      {"ABCDEF." + join_secret, "id must be 6 or 8"},
      {"abcde." + join_secret, "id must be 6 or 8"},
      {"abcdefg." + join_secret, "id must be 6 or 8"},
      {"abcdef.S3cr3ts3cr3ts3cr", "secret of 16"},  // uppercase
      {"abcdef." + join_secret + "x", "secret of 16"},
      {"abcdef." + join_secret.substr(1), "secret of 16"},
      {"abcdef." + user_secret, "secret of 16"},  // shapes do not mix
      {"abcd1234." + join_secret, "secret of 32"},
      {"abcd1234." + user_secret + "Z", "secret of 32"},
      {"abcd1234." + user_secret.substr(1) + "-", "secret of 32"},
      {"abcd1234." + user_secret.substr(1) + " ", "secret of 32"},
      {" abcd1234." + user_secret, "id must be 6 or 8"},
      {"abcd1234." + user_secret + "\n", "secret of 32"},
      {"abcd1234." + user_secret.substr(1) + std::string(1, '\0'),
       "secret of 32"},
      {"Bearer abcd1234." + user_secret, "id must be 6 or 8"},
      {std::string(10000, 'a') + "." + join_secret, "longer than"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<TokenParts> parsed = ParseToken(c.text);
    EXPECT_THAT(parsed, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(c.message)))
        << absl::CEscape(c.text);
    const std::string message(parsed.status().message());
    EXPECT_THAT(message, Not(HasSubstr(join_secret.substr(0, 8))));
    EXPECT_THAT(message, Not(HasSubstr(user_secret.substr(0, 8))));
  }
}

TEST(JoinTokenTest, RoundTrips) {
  const JoinToken token{kCaHash, NewJoinCredential()};
  const std::string text = FormatJoinToken(token);
  EXPECT_EQ(text,
            absl::StrCat("JS1", kCaHash, "::", FormatToken(token.credential)));
  for (const std::string& written :
       {text, text + "\n", "  " + text + " \r\n", "\t" + text}) {
    absl::StatusOr<JoinToken> parsed = ParseJoinToken(written);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->ca_hash, kCaHash);
    EXPECT_EQ(parsed->credential.id, token.credential.id);
    EXPECT_EQ(parsed->credential.secret, token.credential.secret);
  }
  // A user-shaped credential is a token too.
  const TokenParts user = NewUserToken();
  absl::StatusOr<JoinToken> parsed =
      ParseJoinToken(FormatJoinToken(JoinToken{kCaHash, user}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->credential.secret, user.secret);
}

TEST(JoinTokenTest, RefusesMalformedWithoutEchoingSecrets) {
  const std::string secret = "s3cr3ts3cr3ts3cr";
  const std::string credential = "abcdef." + secret;
  const std::string hash = kCaHash;
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {" \n\t", "empty"},
      {hash + "::" + credential, "must start with JS1"},
      {"K10" + hash + "::" + credential, "must start with JS1"},
      {"js1" + hash + "::" + credential, "must start with JS1"},
      {"JS2" + hash + "::" + credential, "must start with JS1"},
      {"JS1::" + credential, "CA hash must be 64"},
      {"JS1" + hash.substr(1) + "::" + credential, "CA hash must be 64"},
      {"JS1" + hash + "0::" + credential, "CA hash must be 64"},
      {"JS1" + std::string(64, 'A') + "::" + credential, "CA hash must be 64"},
      {"JS1" + std::string(63, 'a') + "g::" + credential, "CA hash must be 64"},
      {"JS1sha256:" + hash + "::" + credential, "CA hash must be 64"},
      {"JS1" + hash, "'::'"},
      {"JS1" + hash + ":" + credential, "CA hash must be 64"},
      {"JS1" + hash + "::", "credential: token is empty"},
      {"JS1" + hash + ":::" + credential, "credential"},
      {"JS1" + hash + "::" + secret, "credential"},
      {"JS1" + hash + "::" + credential + "::" + credential, "credential"},
      {"JS1" + hash + "::abcdef." + secret + "X", "credential"},
      {"JS1" + hash + ":: " + credential, "credential"},
      {"JS1" + hash + "::" + std::string(1000, 'x'), "longer than"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<JoinToken> parsed = ParseJoinToken(c.text);
    EXPECT_THAT(parsed, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(c.message)))
        << absl::CEscape(c.text);
    EXPECT_THAT(std::string(parsed.status().message()),
                Not(HasSubstr(secret.substr(0, 6))));
  }
}

TEST(Sha256HexTest, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(std::string("a\0b", 3)),
            Sha256Hex(std::string("a\0b", 3)));
  EXPECT_NE(Sha256Hex(std::string("a\0b", 3)), Sha256Hex("a"));
}

TEST(ConstantTimeEqualsTest, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "xbc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(
      ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  EXPECT_FALSE(
      ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace jobset::auth
