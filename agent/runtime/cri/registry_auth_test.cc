#include "agent/runtime/cri/registry_auth.h"

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent::cri {

// For gtest's messages (found by ADL); never prints the password.
void PrintTo(const RegistryAuth& a, std::ostream* os) {
  *os << "{" << a.username << ", " << a.server_address << ", key " << a.key
      << "}";
}

namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct KeyCase {
  std::string key;
  std::string host, port, path, index;
};

TEST(ParseRegistryKeyTest, ReadsKeysAsTheKeyringDoes) {
  const KeyCase cases[] = {
      {"127.0.0.1:5000", "127.0.0.1", "5000", "", "127.0.0.1:5000"},
      {"http://127.0.0.1:5000", "127.0.0.1", "5000", "", "127.0.0.1:5000"},
      {"http://127.0.0.1:5000/", "127.0.0.1", "5000", "", "127.0.0.1:5000"},
      {"https://index.docker.io/v1/", "index.docker.io", "", "",
       "index.docker.io"},
      {"index.docker.io/v2/", "index.docker.io", "", "", "index.docker.io"},
      {"index.docker.io", "index.docker.io", "", "", "index.docker.io"},
      {"registry.example.com:443/ns", "registry.example.com", "443", "/ns",
       "registry.example.com:443/ns"},
      {"*.example.com/team", "*.example.com", "", "/team",
       "*.example.com/team"},
      // /v1/ and /v2/ are dropped from the front of a longer path too; a
      // bare /v1 is a path.
      {"quay.io/v1/coreos", "quay.io", "", "/coreos", "quay.io/coreos"},
      {"https://quay.io/v2/coreos/", "quay.io", "", "/coreos/",
       "quay.io/coreos/"},
      {"quay.io/v1", "quay.io", "", "/v1", "quay.io/v1"},
      {"reg.io/ns/", "reg.io", "", "/ns/", "reg.io/ns/"},
      // What a URL has besides: userinfo, query and fragment are not used.
      {"user:pw@reg.io", "reg.io", "", "", "reg.io"},
      {"reg.io/a?x=1#frag", "reg.io", "", "/a", "reg.io/a"},
      {"reg.io/a%20b", "reg.io", "", "/a b", "reg.io/a b"},
      {"[::1]:5000", "::1", "5000", "", "[::1]:5000"},
      // No port after the colon, or too many colons: the host is the whole.
      {"reg.io:", "reg.io", "", "", "reg.io:"},
      {"a:b:5000", "a:b:5000", "", "", "a:b:5000"},
      {"[::1]", "[::1]", "", "", "[::1]"},
  };
  for (const KeyCase& c : cases) {
    SCOPED_TRACE(c.key);
    absl::StatusOr<RegistryKey> key = ParseRegistryKey(c.key);
    ASSERT_THAT(key.status(), IsOk());
    EXPECT_EQ(key->host, c.host);
    EXPECT_EQ(key->port, c.port);
    EXPECT_EQ(key->path, c.path);
    EXPECT_EQ(key->index, c.index);
  }
}

TEST(ParseRegistryKeyTest, RefusesWhatGoUrlParseRefuses) {
  const std::pair<std::string, std::string> cases[] = {
      {"reg.io:abc", "invalid port \":abc\" after host"},
      {"reg.io:50a0/ns", "invalid port"},
      {"[::1]x", "invalid port \"x\" after host"},
      {"[::1", "missing ']' in host"},
      {"reg io", "invalid character \" \" in host name"},
      {"reg|io", "invalid character"},
      {"re%41g.io", "invalid URL escape \"%41\""},
      {"reg.io/%zz", "invalid URL escape \"%zz\""},
      {"reg.io/a%2", "invalid URL escape \"%2\""},
      {"reg.io#%", "invalid URL escape"},
      {"reg.io\n", "invalid control character in URL"},
      {"us^er@reg.io", "invalid userinfo"},
      // So no negated class ("[^0-9]") in a key's host.
      {"reg-[^0-9].example.com", "invalid character \"^\" in host name"},
      // Decodes to the index "reg.io/a%b", which does not parse again (the
      // keyring matches with it).
      {"reg.io/a%25b", "invalid URL escape \"%b\""},
  };
  for (const auto& [key, why] : cases) {
    SCOPED_TRACE(key);
    EXPECT_THAT(ParseRegistryKey(key).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(why)));
  }
}

struct MatchCase {
  std::string key, domain, path;
  bool match;
};

TEST(RegistryKeyMatchesTest, HostLabelsGlobPortExactPathPrefix) {
  const MatchCase cases[] = {
      {"127.0.0.1:5000", "127.0.0.1:5000", "test/bb", true},
      {"http://127.0.0.1:5000", "127.0.0.1:5000", "test/bb", true},
      {"https://127.0.0.1:5000/v2/", "127.0.0.1:5000", "test/bb", true},
      // The port is compared exactly, none being "".
      {"127.0.0.1:5000", "127.0.0.1:5001", "test/bb", false},
      {"127.0.0.1", "127.0.0.1:5000", "test/bb", false},
      {"127.0.0.1:5000", "127.0.0.1", "test/bb", false},
      {"registry.example.com:443/ns", "registry.example.com:443", "ns/app",
       true},
      {"registry.example.com:443/ns", "registry.example.com", "ns/app", false},
      {"registry.example.com", "registry.example.com:443", "ns/app", false},
      // A glob per label, with as many labels.
      {"*.example.com", "a.example.com", "x", true},
      {"*.example.com", "example.com", "x", false},
      {"*.example.com", "a.b.example.com", "x", false},
      {"*.*.example.com", "a.b.example.com", "x", true},
      {"*.io", "docker.io", "library/busybox", true},
      {"*", "localhost", "x", true},
      {"reg-*.example.com", "reg-eu.example.com", "x", true},
      // '?' starts a URL's query: the host is "reg-", as for kubelet.
      {"reg-?.example.com", "reg-1.example.com", "x", false},
      {"reg-?.example.com", "reg-", "x", true},
      {"reg-[0-9].example.com", "reg-5.example.com", "x", true},
      {"reg-[0-9].example.com", "reg-a.example.com", "x", false},
      {"reg-[ab-d].example.com", "reg-c.example.com", "x", true},
      {"reg-[ab-d].example.com", "reg-e.example.com", "x", false},
      {"reg-[z-a].example.com", "reg-m.example.com", "x", false},
      {"*-*.example.com", "eu-west.example.com", "x", true},
      {"*-*.example.com", "euwest.example.com", "x", false},
      {"a*b*c.io", "axxbyybc.io", "x", true},
      {"a*b*c.io", "axxbyybcd.io", "x", false},
      {"**.io", "quay.io", "x", true},
      // A malformed pattern matches nothing (filepath.ErrBadPattern).
      {"reg-[.example.com", "reg-[.example.com", "x", false},
      {"reg-[].example.com", "reg-].example.com", "x", false},
      // Labels compare exactly (case too), not by suffix.
      {"example.com", "a.example.com", "x", false},
      {"Quay.io", "quay.io", "x", false},
      // The key's path is a string prefix of the image's.
      {"*.example.com/team", "a.example.com", "team/app", true},
      {"*.example.com/team", "a.example.com", "teamx/app", true},
      {"*.example.com/team", "a.example.com", "other/team", false},
      {"reg.io/ns/", "reg.io", "ns/app", true},
      {"reg.io/ns/", "reg.io", "nsx/app", false},
      {"quay.io/coreos", "quay.io", "coreos/etcd", true},
      {"quay.io/coreos/etcd/more", "quay.io", "coreos/etcd", false},
      {"docker.io", "docker.io", "library/busybox", true},
      {"docker.io/library", "docker.io", "library/busybox", true},
      {"docker.io/library", "docker.io", "someone/img", false},
      // index.docker.io is not docker.io by itself (three labels); see the
      // fallback in MatchingCredentials.
      {"https://index.docker.io/v1/", "docker.io", "library/busybox", false},
      {"[::1]:5000", "[::1]:5000", "x", true},
      {"[::1]:5000", "[::1]:5001", "x", false},
  };
  for (const MatchCase& c : cases) {
    SCOPED_TRACE(c.key + " vs " + c.domain + "/" + c.path);
    absl::StatusOr<RegistryKey> key = ParseRegistryKey(c.key);
    ASSERT_THAT(key.status(), IsOk());
    EXPECT_EQ(RegistryKeyMatches(*key, c.domain, c.path), c.match);
  }
}

google::protobuf::RepeatedPtrField<api::RegistryCredential> Creds(
    const std::vector<std::vector<std::string>>& entries) {
  google::protobuf::RepeatedPtrField<api::RegistryCredential> out;
  for (const std::vector<std::string>& e : entries) {
    api::RegistryCredential* c = out.Add();
    c->set_server(e.at(0));
    c->set_username(e.at(1));
    c->set_password(e.at(2));
  }
  return out;
}

RegistryAuth Auth(std::string user, std::string password, std::string server,
                  std::string key) {
  return {std::move(user), std::move(password), std::move(server),
          std::move(key)};
}

TEST(MatchingCredentialsTest, PrivateRegistryOnLoopback) {
  const auto creds = Creds({{"127.0.0.1:5000", "alice", "s3cret"},
                            {"127.0.0.1:5001", "bob", "other"}});
  EXPECT_THAT(MatchingCredentials("127.0.0.1:5000/test/bb:1", creds),
              ElementsAre(Auth("alice", "s3cret", "https://127.0.0.1:5000",
                               "127.0.0.1:5000")));
  EXPECT_THAT(MatchingCredentials(
                  "127.0.0.1:5000/test/bb:1",
                  Creds({{"http://127.0.0.1:5000", "alice", "s3cret"}})),
              ElementsAre(Auth("alice", "s3cret", "https://127.0.0.1:5000",
                               "http://127.0.0.1:5000")));
  EXPECT_THAT(MatchingCredentials("127.0.0.1:5002/test/bb:1", creds),
              IsEmpty());
}

TEST(MatchingCredentialsTest, MostSpecificKeyFirstThenTheGivenOrder) {
  // Reverse lexical order of the keys: "quay.io/coreos" > "quay.io" >
  // "*.io"; the two "quay.io" keys keep jobsetd's order.
  const auto creds = Creds({{"*.io", "wild", "1"},
                            {"https://quay.io/", "host1", "2"},
                            {"quay.io/coreos", "team", "3"},
                            {"quay.io", "host2", "4"},
                            {"quay.io/other", "no", "5"},
                            {"gcr.io", "no", "6"}});
  EXPECT_THAT(
      MatchingCredentials("quay.io/coreos/etcd:v3.5", creds),
      ElementsAre(Auth("team", "3", "https://quay.io", "quay.io/coreos"),
                  Auth("host1", "2", "https://quay.io", "https://quay.io/"),
                  Auth("host2", "4", "https://quay.io", "quay.io"),
                  Auth("wild", "1", "https://quay.io", "*.io")));
}

TEST(MatchingCredentialsTest, EachUsernameAndPasswordOnce) {
  const auto creds = Creds({{"reg.io", "alice", "pw"},
                            {"reg.io/ns", "alice", "pw"},
                            {"reg.io", "alice", "other"}});
  EXPECT_THAT(MatchingCredentials("reg.io/ns/app:1", creds),
              ElementsAre(Auth("alice", "pw", "https://reg.io", "reg.io/ns"),
                          Auth("alice", "other", "https://reg.io", "reg.io")));
}

TEST(MatchingCredentialsTest, TagAndDigestDoNotMatter) {
  const auto creds = Creds({{"reg.io/ns/app", "alice", "pw"}});
  for (const char* image :
       {"reg.io/ns/app", "reg.io/ns/app:1",
        "reg.io/ns/app@sha256:"
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}) {
    SCOPED_TRACE(image);
    EXPECT_THAT(
        MatchingCredentials(image, creds),
        ElementsAre(Auth("alice", "pw", "https://reg.io", "reg.io/ns/app")));
  }
  // A tag in the key is part of its path: no repository path has it.
  EXPECT_THAT(MatchingCredentials("reg.io/ns/app:1",
                                  Creds({{"reg.io/ns/app:1", "alice", "pw"}})),
              IsEmpty());
}

TEST(MatchingCredentialsTest, DockerHubFallsBackToIndexDockerIo) {
  const auto hub = Creds({{"https://index.docker.io/v1/", "hub", "pw"}});
  for (const char* image :
       {"busybox", "docker.io/library/busybox:latest", "someone/app:1",
        "index.docker.io/library/busybox"}) {
    SCOPED_TRACE(image);
    EXPECT_THAT(MatchingCredentials(image, hub),
                ElementsAre(Auth("hub", "pw", "https://registry-1.docker.io",
                                 "https://index.docker.io/v1/")));
  }
  // Not for another registry; "localhost" (which kubelet's name test would
  // take for Docker Hub) neither.
  EXPECT_THAT(MatchingCredentials("quay.io/x", hub), IsEmpty());
  EXPECT_THAT(MatchingCredentials("localhost/x", hub), IsEmpty());
  EXPECT_THAT(MatchingCredentials("localhost:5000/x", hub), IsEmpty());
  // Only when no key matched the image itself.
  EXPECT_THAT(
      MatchingCredentials("busybox",
                          Creds({{"https://index.docker.io/v1/", "hub", "pw"},
                                 {"docker.io", "dio", "pw2"}})),
      ElementsAre(
          Auth("dio", "pw2", "https://registry-1.docker.io", "docker.io")));
  // index.docker.io with a path is another key: no fallback.
  EXPECT_THAT(MatchingCredentials(
                  "busybox", Creds({{"index.docker.io/library", "x", "y"}})),
              IsEmpty());
}

TEST(MatchingCredentialsTest, BadKeysAreSkipped) {
  const auto creds = Creds({{"reg io", "bad", "1"},
                            {"127.0.0.1:abc", "bad", "2"},
                            {"", "empty", "3"},
                            {"[::1", "bad", "4"},
                            {"127.0.0.1:5000", "good", "5"}});
  EXPECT_THAT(MatchingCredentials("127.0.0.1:5000/x:1", creds),
              ElementsAre(Auth("good", "5", "https://127.0.0.1:5000",
                               "127.0.0.1:5000")));
}

TEST(MatchingCredentialsTest, NothingForAnImageThatDoesNotParseOrNoCreds) {
  const auto creds = Creds({{"*", "any", "1"}, {"docker.io", "dio", "2"}});
  EXPECT_THAT(MatchingCredentials("Busybox:1", creds), IsEmpty());
  EXPECT_THAT(MatchingCredentials("", creds), IsEmpty());
  EXPECT_THAT(MatchingCredentials("busybox", Creds({})), IsEmpty());
}

}  // namespace
}  // namespace jobset::agent::cri
