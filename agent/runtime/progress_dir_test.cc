// The progress directory's path, its owner and mode, and the variable every
// container gets.
#include "agent/runtime/progress_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;

std::string TempDir() {
  std::string tmpl = absl::StrCat(
      getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp", "/podXXXXXX");
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

TEST(ProgressDirTest, Paths) {
  EXPECT_EQ(ProgressDirOf("/w/pods/u1"), "/w/pods/u1/progress");
  EXPECT_EQ(ProgressFileInPod("/w/pods/u1", false),
            "/w/pods/u1/progress/progress");
  EXPECT_EQ(ProgressFileInPod("/w/pods/u1", true),
            "/var/run/jobset/progress/progress");
}

TEST(ProgressDirTest, EveryContainerGetsTheVariableAndOnlyOurs) {
  api::PodSpec spec;
  api::Container* init = spec.add_init_containers();
  init->set_name("init");
  api::Container* main = spec.add_containers();
  main->set_name("main");
  // A value of the spec's own (twice) is replaced: the agent reads only
  // its file.
  for (int i = 0; i < 2; ++i) {
    api::EnvVar* e = main->add_env();
    e->set_name(kProgressEnv);
    e->set_value("/elsewhere");
  }
  api::EnvVar* keep = main->add_env();
  keep->set_name("KEEP");
  keep->set_value("1");
  SetProgressEnv("/var/run/jobset/progress/progress", &spec);
  for (const api::Container& c :
       {spec.init_containers(0), spec.containers(0)}) {
    int found = 0;
    for (const api::EnvVar& e : c.env()) {
      if (e.name() != kProgressEnv) continue;
      ++found;
      EXPECT_EQ(e.value(), "/var/run/jobset/progress/progress") << c.name();
    }
    EXPECT_EQ(found, 1) << c.name();
  }
  EXPECT_EQ(spec.containers(0).env(0).name(), "KEEP");
}

TEST(ProgressDirTest, MadePrivateOrAsTheEmptyDirs) {
  const std::string pod_dir = TempDir();
  api::PodSpec spec;
  spec.add_containers()->set_name("main");  // no runAsUser: may be another
  ASSERT_THAT(MakeProgressDir(pod_dir, spec), IsOk());
  struct stat st;
  ASSERT_EQ(stat(ProgressDirOf(pod_dir).c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  // As root: writable by the pod's user, as an emptyDir (0777); otherwise
  // the agent's user's own (the pod runs as it).
  EXPECT_EQ(st.st_mode & 07777, geteuid() == 0 ? 0777u : 0700u);
  // Made again: no error.
  EXPECT_THAT(MakeProgressDir(pod_dir, spec), IsOk());
}

}  // namespace
}  // namespace jobset::agent
