#include "cli/kubeconfig.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAdminConf[] = R"(apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: jobsetd
  cluster:
    server: https://10.0.0.5:7070
    certificate-authority-data: Q0EgUEVN
    tls-server-name: server.jobsetd
    extensions:
    - name: something
users:
- name: admin
  user:
    token: abc.def
- name: bob
  user:
    tokenFile: bob-token
contexts:
- name: admin@jobsetd
  context:
    cluster: jobsetd
    user: admin
    namespace: default
- name: bob@jobsetd
  context: {cluster: jobsetd, user: bob, namespace: team-b}
- name: lost
  context: {cluster: nowhere, user: admin}
current-context: admin@jobsetd
)";

// A scratch directory under TEST_TMPDIR, removed by bazel.
std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir == nullptr ? "/tmp" : dir;
}

void WriteFile(const std::string& path, const std::string& text,
               mode_t mode = 0600) {
  std::ofstream(path, std::ios::trunc) << text;
  chmod(path.c_str(), mode);
}

TEST(ParseKubeconfigTest, ResolvesTheCurrentContext) {
  absl::StatusOr<Kubeconfig> config =
      ParseKubeconfig(kAdminConf, "/etc/jobset/admin.conf");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<Connection> conn = ResolveConnection(*config, {});
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_EQ(conn->address, "10.0.0.5:7070");
  EXPECT_TRUE(conn->tls);
  EXPECT_EQ(conn->ca_pem, "CA PEM");
  EXPECT_EQ(conn->server_name, "server.jobsetd");
  EXPECT_EQ(conn->token, "abc.def");
  EXPECT_EQ(conn->namespace_, "default");
  EXPECT_EQ(conn->config_path, "/etc/jobset/admin.conf");
}

TEST(ParseKubeconfigTest, OverridesWinAndPathsAreRelativeToTheFile) {
  const std::string dir = TempDir();
  WriteFile(absl::StrCat(dir, "/bob-token"), "bob.secret\n");
  absl::StatusOr<Kubeconfig> config =
      ParseKubeconfig(kAdminConf, absl::StrCat(dir, "/config"));
  ASSERT_TRUE(config.ok()) << config.status();
  Overrides overrides;
  overrides.context = "bob@jobsetd";
  absl::StatusOr<Connection> conn = ResolveConnection(*config, overrides);
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_EQ(conn->token, "bob.secret");
  EXPECT_EQ(conn->namespace_, "team-b");
  overrides.token = "other.token";
  overrides.namespace_ = "ns";
  overrides.server = "https://127.0.0.1:9000";
  conn = ResolveConnection(*config, overrides);
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_EQ(conn->token, "other.token");
  EXPECT_EQ(conn->namespace_, "ns");
  EXPECT_EQ(conn->address, "127.0.0.1:9000");
}

TEST(ParseKubeconfigTest, ErrorsSayWhatIsWrong) {
  absl::StatusOr<Kubeconfig> config = ParseKubeconfig(kAdminConf, "f.conf");
  ASSERT_TRUE(config.ok()) << config.status();
  Overrides overrides;
  overrides.context = "x";
  EXPECT_THAT(ResolveConnection(*config, overrides),
              StatusIs(absl::StatusCode::kNotFound,
                       "context \"x\" not found in f.conf"));
  overrides.context = "lost";
  EXPECT_THAT(ResolveConnection(*config, overrides),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("cluster \"nowhere\" (of context \"lost\") "
                                 "not found")));
  config->current_context.clear();
  EXPECT_THAT(ResolveConnection(*config, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "no current-context in f.conf; pass --context"));

  absl::StatusOr<Kubeconfig> bad = ParseKubeconfig(R"(
clusters:
- name: c
  cluster: {server: "https://h:1", certificate-authority-data: "!!notb64"}
contexts:
- {name: x, context: {cluster: c}}
current-context: x
)",
                                                   "f.conf");
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_THAT(ResolveConnection(*bad, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "certificate-authority-data of cluster \"c\" is not "
                       "base64"));
  EXPECT_THAT(ParseKubeconfig("clusters: {a: b}", "f.conf"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("clusters must be a list")));
  EXPECT_THAT(
      ParseKubeconfig("clusters:\n- cluster: {}\n", "f.conf"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has no name")));
  EXPECT_THAT(
      ParseKubeconfig("users:\n- name: u\n  user: {token: [1]}\n", "f.conf"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("user \"u\".token: must be a string")));
  EXPECT_THAT(ParseKubeconfig("a: [", "f.conf"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not valid YAML")));
  EXPECT_THAT(ParseKubeconfig("kind: Pod", "f.conf"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kind must be Config")));
  EXPECT_THAT(
      ParseKubeconfig(std::string(kMaxConfigBytes + 1, ' '), "f"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("larger than")));
}

Kubeconfig OneCluster(const std::string& server, bool skip_verify,
                      const std::string& ca_data) {
  Kubeconfig config;
  config.files = {"f.conf"};
  ClusterEntry& cluster = config.clusters["c"];
  cluster.server = server;
  cluster.certificate_authority_data = ca_data;
  cluster.insecure_skip_tls_verify = skip_verify;
  config.contexts["x"].cluster = "c";
  config.current_context = "x";
  return config;
}

TEST(ResolveConnectionTest, SchemesDecideTls) {
  const std::string ca = absl::Base64Escape("CA");
  absl::StatusOr<Connection> conn =
      ResolveConnection(OneCluster("http://127.0.0.1:7070", false, ""), {});
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_FALSE(conn->tls);
  EXPECT_THAT(
      ResolveConnection(OneCluster("http://10.1.1.1:7070", false, ""), {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("only allowed to a loopback")));
  conn = ResolveConnection(OneCluster("h:7070", false, ca), {});
  ASSERT_TRUE(conn.ok());
  EXPECT_TRUE(conn->tls);
  // No scheme means TLS, CA or not (system roots then).
  conn = ResolveConnection(OneCluster("h:7070", false, ""), {});
  ASSERT_TRUE(conn.ok());
  EXPECT_TRUE(conn->tls);
  EXPECT_THAT(ResolveConnection(OneCluster("https://h:7070", true, ""), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("insecure-skip-tls-verify of cluster \"c\"")));
  conn = ResolveConnection(OneCluster("https://[::1]:7070", true, ""), {});
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_TRUE(conn->insecure_skip_tls_verify);
  EXPECT_THAT(ResolveConnection(OneCluster("ftp://h:1", false, ""), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("https:// or http://")));
}

TEST(ResolveConnectionTest, WithoutAFileABareServerIsTls) {
  Overrides overrides;
  overrides.server = "127.0.0.1:5555";
  overrides.token = "t.s";
  absl::StatusOr<Connection> conn = ResolveConnection(Kubeconfig(), overrides);
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_EQ(conn->address, "127.0.0.1:5555");
  EXPECT_TRUE(conn->tls);
  EXPECT_EQ(conn->server_name, "server.jobsetd");
  EXPECT_EQ(conn->token, "t.s");
  conn = ResolveConnection(Kubeconfig(), {});
  ASSERT_TRUE(conn.ok());
  EXPECT_EQ(conn->address, "127.0.0.1:7070");
  EXPECT_TRUE(conn->tls);
  overrides.token.reset();
  overrides.server = "http://127.0.0.1:5555";
  conn = ResolveConnection(Kubeconfig(), overrides);
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_FALSE(conn->tls);
  overrides.server = "http://10.0.0.1:7070";
  EXPECT_THAT(ResolveConnection(Kubeconfig(), overrides),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("only allowed to a loopback")));
  overrides.server = "https://10.0.0.1:7070";
  conn = ResolveConnection(Kubeconfig(), overrides);
  ASSERT_TRUE(conn.ok());
  EXPECT_TRUE(conn->tls);
  EXPECT_EQ(conn->server_name, "server.jobsetd");
}

// A bearer token is only ever sent over TLS: http:// with a token, from the
// command line or the config file, is refused naming the server.
TEST(ResolveConnectionTest, ATokenIsRefusedInPlaintext) {
  Overrides overrides;
  overrides.server = "http://127.0.0.1:5555";
  overrides.token = "t.s";
  EXPECT_THAT(ResolveConnection(Kubeconfig(), overrides),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("server \"http://127.0.0.1:5555\""),
                             HasSubstr("only sent over TLS"))));
  Kubeconfig config = OneCluster("http://127.0.0.1:7070", false, "");
  config.contexts["x"].user = "u";
  config.users["u"].token = "t.s";
  EXPECT_THAT(ResolveConnection(config, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("only sent over TLS")));
  Overrides token_only;
  token_only.token = "t.s";
  EXPECT_THAT(ResolveConnection(OneCluster("http://127.0.0.1:7070", false, ""),
                                token_only),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("only sent over TLS")));
  // The same token over https:// or a bare host:port is fine.
  config.clusters["c"].server = "127.0.0.1:7070";
  absl::StatusOr<Connection> conn = ResolveConnection(config, {});
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_TRUE(conn->tls);
  EXPECT_EQ(conn->token, "t.s");
}

TEST(ResolveConnectionTest, AServerListNamesEveryReplica) {
  const std::string ca = absl::Base64Escape("CA");
  absl::StatusOr<Connection> conn = ResolveConnection(
      OneCluster("https://a:7070,https://b:7070/,c:7070", false, ca), {});
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_TRUE(conn->tls);
  EXPECT_EQ(conn->address, "a:7070,b:7070,c:7070");
  EXPECT_THAT(
      ResolveConnection(OneCluster("https://a:7070,http://b:7070", false, ca),
                        {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("every replica's address must use the first one's "
                         "scheme (https)")));
  // Plaintext only when every replica is on this host.
  conn = ResolveConnection(
      OneCluster("http://127.0.0.1:1,http://127.0.0.2:2", false, ""), {});
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_FALSE(conn->tls);
  EXPECT_THAT(
      ResolveConnection(
          OneCluster("http://127.0.0.1:1,http://10.0.0.1:2", false, ""), {}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("only allowed to a loopback")));
  Overrides overrides;
  overrides.server = "https://10.0.0.1:7070,https://10.0.0.2:7070";
  conn = ResolveConnection(Kubeconfig(), overrides);
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_EQ(conn->address, "10.0.0.1:7070,10.0.0.2:7070");
}

TEST(LoadKubeconfigTest, MergesFirstWinsAndWarnsAboutModes) {
  const std::string dir = TempDir();
  const std::string a = absl::StrCat(dir, "/a.conf");
  const std::string b = absl::StrCat(dir, "/b.conf");
  WriteFile(a, R"(
contexts:
- {name: x, context: {cluster: from-a}}
current-context: x
)",
            0644);
  WriteFile(b, R"(
contexts:
- {name: x, context: {cluster: from-b}}
- {name: y, context: {cluster: only-b}}
current-context: y
)");
  std::ostringstream warnings;
  absl::StatusOr<Kubeconfig> config = LoadKubeconfig(
      ConfigFiles(std::nullopt,
                  absl::StrCat(a, "::", b, ":/nonexistent").c_str(), nullptr),
      false, &warnings);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->current_context, "x");
  EXPECT_EQ(config->contexts["x"].cluster, "from-a");
  EXPECT_EQ(config->contexts["y"].cluster, "only-b");
  EXPECT_THAT(warnings.str(), HasSubstr(a));
  EXPECT_THAT(warnings.str(), Not(HasSubstr(b)));
  EXPECT_THAT(LoadKubeconfig({"/nonexistent"}, true, nullptr),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent")));
}

TEST(ConfigFilesTest, FlagThenEnvThenHome) {
  EXPECT_EQ(ConfigFiles("x", "a:b", "/h"), std::vector<std::string>{"x"});
  EXPECT_EQ(ConfigFiles(std::nullopt, "a:b", "/h"),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(ConfigFiles(std::nullopt, nullptr, "/nonexistent").empty());
  const std::string home = TempDir();
  mkdir(absl::StrCat(home, "/.config").c_str(), 0700);
  mkdir(absl::StrCat(home, "/.config/jobset").c_str(), 0700);
  WriteFile(absl::StrCat(home, "/.config/jobset/config"), "");
  EXPECT_EQ(
      ConfigFiles(std::nullopt, "", home.c_str()),
      std::vector<std::string>{absl::StrCat(home, "/.config/jobset/config")});
}

TEST(KubeconfigYamlTest, RedactsUnlessRaw) {
  absl::StatusOr<Kubeconfig> config = ParseKubeconfig(kAdminConf, "f.conf");
  ASSERT_TRUE(config.ok());
  absl::StatusOr<std::string> view = KubeconfigYaml(*config, false, false);
  ASSERT_TRUE(view.ok());
  EXPECT_THAT(*view, HasSubstr("certificate-authority-data: DATA+OMITTED"));
  EXPECT_THAT(*view, HasSubstr("token: REDACTED"));
  EXPECT_THAT(*view, Not(HasSubstr("abc.def")));
  EXPECT_THAT(*view, HasSubstr("bob@jobsetd"));
  view = KubeconfigYaml(*config, true, true);
  ASSERT_TRUE(view.ok());
  EXPECT_THAT(*view, HasSubstr("abc.def"));
  EXPECT_THAT(*view, Not(HasSubstr("bob@jobsetd")));
  // What it prints reads back.
  absl::StatusOr<Kubeconfig> again = ParseKubeconfig(*view, "f.conf");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->users["admin"].token, "abc.def");
}

TEST(WriteContextTest, EditsInPlaceKeepingTheRest) {
  const std::string path = absl::StrCat(TempDir(), "/edit.conf");
  WriteFile(path, kAdminConf);
  ASSERT_TRUE(WriteCurrentContext(path, "bob@jobsetd").ok());
  ASSERT_TRUE(
      WriteContext(path, "new", "jobsetd", "admin", std::string("ns")).ok());
  ASSERT_TRUE(WriteContext(path, "bob@jobsetd", std::nullopt, std::nullopt,
                           std::string("other"))
                  .ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("preferences"));
  absl::StatusOr<Kubeconfig> config = ParseKubeconfig(text.str(), path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->current_context, "bob@jobsetd");
  EXPECT_EQ(config->contexts["new"].namespace_, "ns");
  EXPECT_EQ(config->contexts["bob@jobsetd"].namespace_, "other");
  EXPECT_EQ(config->contexts["bob@jobsetd"].user, "bob");
  EXPECT_EQ(config->users["admin"].token, "abc.def");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A missing file is created.
  const std::string fresh = absl::StrCat(TempDir(), "/fresh.conf");
  ASSERT_TRUE(WriteCurrentContext(fresh, "x").ok());
  config = LoadKubeconfig({fresh}, true, nullptr);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->current_context, "x");
}

}  // namespace
}  // namespace jobset::cli
