#include "api/image_reference.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::testing::HasSubstr;

std::string Normalized(absl::string_view image) {
  absl::StatusOr<ImageReference> ref = ParseImageReference(image);
  return ref.ok() ? ref->Normalized() : std::string(ref.status().message());
}

TEST(ImageReferenceTest, NormalizesAsDockerDoes) {
  EXPECT_EQ(Normalized("busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(Normalized("python:3.11"), "docker.io/library/python:3.11");
  EXPECT_EQ(Normalized("team/app:v1"), "docker.io/team/app:v1");
  EXPECT_EQ(Normalized("index.docker.io/team/app"),
            "docker.io/team/app:latest");
  EXPECT_EQ(Normalized("nvcr.io/nvidia/pytorch:24.01-py3"),
            "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(Normalized("127.0.0.1:5055/test/bb:1"), "127.0.0.1:5055/test/bb:1");
  EXPECT_EQ(Normalized("localhost/bb"), "localhost/bb:latest");
  EXPECT_EQ(Normalized("us-docker.pkg.dev/proj/repo/jax:0.4"),
            "us-docker.pkg.dev/proj/repo/jax:0.4");
  EXPECT_EQ(Normalized("[::1]:5000/bb:1"), "[::1]:5000/bb:1");
  const std::string digest = "sha256:" + std::string(64, 'a');
  EXPECT_EQ(Normalized("busybox@" + digest),
            "docker.io/library/busybox@" + digest);
  EXPECT_EQ(Normalized("busybox:1.36@" + digest),
            "docker.io/library/busybox:1.36@" + digest);
  EXPECT_EQ(Normalized("a__b/c--d/e.f_g"), "docker.io/a__b/c--d/e.f_g:latest");
}

TEST(ImageReferenceTest, SplitsDomainPathTagAndDigest) {
  absl::StatusOr<ImageReference> ref =
      ParseImageReference("reg.example:5000/team/app:v2");
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->domain, "reg.example:5000");
  EXPECT_EQ(ref->path, "team/app");
  EXPECT_EQ(ref->tag, "v2");
  EXPECT_EQ(ref->digest, "");
  EXPECT_EQ(ref->Name(), "reg.example:5000/team/app");
}

TEST(ImageReferenceTest, RefusesWhatKubeletCallsInvalidImageName) {
  for (const std::string& bad : std::vector<std::string>{
           "", "Busybox", "team/App", "busybox:", "busybox:-x", "bad image",
           "busybox@sha256:abc", "busybox@sha256:" /* no hex */, "/busybox",
           "busybox/", "a//b", "-a/b", "a-/b:1", "reg.example:port/x", "a@b",
           "x:" + std::string(129, 't'), "a..b", "a___b", "bb\n"}) {
    absl::StatusOr<ImageReference> ref = ParseImageReference(bad);
    EXPECT_FALSE(ref.ok()) << "accepted \"" << bad << "\"";
    if (!ref.ok()) {
      EXPECT_THAT(std::string(ref.status().message()),
                  HasSubstr("invalid reference format"));
    }
  }
  EXPECT_THAT(std::string(ParseImageReference("Busybox").status().message()),
              HasSubstr("repository name must be lowercase"));
  EXPECT_FALSE(
      ParseImageReference("r.io/" + std::string(kMaxImageNameLength, 'a'))
          .ok());
}

TEST(ImageReferenceTest, DefaultPullPolicyFollowsTheTag) {
  EXPECT_EQ(DefaultPullPolicy("busybox"), kPullAlways);
  EXPECT_EQ(DefaultPullPolicy("busybox:latest"), kPullAlways);
  EXPECT_EQ(DefaultPullPolicy("127.0.0.1:5000/bb"), kPullAlways);
  EXPECT_EQ(DefaultPullPolicy("busybox:1.36"), kPullIfNotPresent);
  EXPECT_EQ(DefaultPullPolicy("127.0.0.1:5000/bb:1"), kPullIfNotPresent);
  EXPECT_EQ(DefaultPullPolicy("busybox@sha256:" + std::string(64, '0')),
            kPullIfNotPresent);
  EXPECT_EQ(DefaultPullPolicy("Not Valid"), kPullIfNotPresent);
}

}  // namespace
}  // namespace jobset::api
