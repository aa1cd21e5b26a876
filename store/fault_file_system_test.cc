// The fault file system keeps what was synced and drops the rest on a power
// cut, as the durability tests (rocksdb_*_fault_test.cc) rely on.
#include "store/fault_file_system.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using Fault = FaultFileSystem::Fault;

class FaultFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        ::testing::TempDir(), "/faultfs-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  std::string Path(const std::string& name) {
    return absl::StrCat(dir_, "/", name);
  }

  // Creates `name` holding `synced` (synced) then `unsynced` (not).
  void Write(const std::string& name, const std::string& synced,
             const std::string& unsynced = "") {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    ASSERT_TRUE(
        fs_->NewWritableFile(Path(name), rocksdb::FileOptions(), &file, nullptr)
            .ok());
    ASSERT_TRUE(file->Append(synced, rocksdb::IOOptions(), nullptr).ok());
    ASSERT_TRUE(file->Sync(rocksdb::IOOptions(), nullptr).ok());
    if (!unsynced.empty()) {
      ASSERT_TRUE(file->Append(unsynced, rocksdb::IOOptions(), nullptr).ok());
    }
    ASSERT_TRUE(file->Close(rocksdb::IOOptions(), nullptr).ok());
  }

  rocksdb::IOStatus SyncDir() {
    std::unique_ptr<rocksdb::FSDirectory> dir;
    rocksdb::IOStatus s =
        fs_->NewDirectory(dir_, rocksdb::IOOptions(), &dir, nullptr);
    if (!s.ok()) return s;
    return dir->Fsync(rocksdb::IOOptions(), nullptr);
  }

  // The file's bytes, or "<absent>".
  std::string Read(const std::string& name) {
    std::ifstream in(Path(name), std::ios::binary);
    if (!in) return "<absent>";
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  std::vector<std::string> Children() {
    std::vector<std::string> names;
    EXPECT_TRUE(
        fs_->GetChildren(dir_, rocksdb::IOOptions(), &names, nullptr).ok());
    std::sort(names.begin(), names.end());
    return names;
  }

  FaultFileSystem::Dropped Drop() {
    absl::StatusOr<FaultFileSystem::Dropped> dropped = fs_->DropUnsyncedData();
    EXPECT_TRUE(dropped.ok()) << dropped.status();
    return dropped.ok() ? *dropped : FaultFileSystem::Dropped{};
  }

  std::string dir_;
  std::shared_ptr<FaultFileSystem> fs_ = std::make_shared<FaultFileSystem>();
};

TEST_F(FaultFileSystemTest, KeepsSyncedBytesAndDropsTheRest) {
  Write("a", "synced", "-lost");
  ASSERT_TRUE(SyncDir().ok());
  EXPECT_EQ(Read("a"), "synced-lost");
  fs_->CutPower();
  const FaultFileSystem::Dropped dropped = Drop();
  EXPECT_EQ(Read("a"), "synced");
  EXPECT_EQ(dropped.files_truncated, 1);
  EXPECT_EQ(dropped.bytes_dropped, 5);
  EXPECT_FALSE(fs_->PowerIsCut());
}

TEST_F(FaultFileSystemTest, AFileTheDirectorySyncDidNotCoverDisappears) {
  Write("covered", "1");
  ASSERT_TRUE(SyncDir().ok());
  Write("new", "2");  // Its data is synced, its name is not.
  EXPECT_EQ(Drop().names_removed, 1);
  EXPECT_EQ(Read("covered"), "1");
  EXPECT_EQ(Read("new"), "<absent>");
}

// RocksDB's CURRENT: a temporary file written and synced, renamed over the
// old one, then the directory synced.
TEST_F(FaultFileSystemTest, ARenameOverAFileIsUndoneUntilTheDirectoryIsSynced) {
  Write("CURRENT", "MANIFEST-1\n");
  ASSERT_TRUE(SyncDir().ok());
  Write("000002.dbtmp", "MANIFEST-2\n");
  ASSERT_TRUE(fs_->RenameFile(Path("000002.dbtmp"), Path("CURRENT"),
                              rocksdb::IOOptions(), nullptr)
                  .ok());
  EXPECT_EQ(Read("CURRENT"), "MANIFEST-2\n");
  EXPECT_THAT(Children(), ElementsAre("CURRENT"));  // The old one is hidden.
  EXPECT_EQ(Drop().names_restored, 1);
  EXPECT_EQ(Read("CURRENT"), "MANIFEST-1\n");
  EXPECT_EQ(Read("000002.dbtmp"), "<absent>");

  Write("000003.dbtmp", "MANIFEST-3\n");
  ASSERT_TRUE(fs_->RenameFile(Path("000003.dbtmp"), Path("CURRENT"),
                              rocksdb::IOOptions(), nullptr)
                  .ok());
  ASSERT_TRUE(SyncDir().ok());
  Drop();
  EXPECT_EQ(Read("CURRENT"), "MANIFEST-3\n");
  EXPECT_THAT(Children(), ElementsAre("CURRENT"));
}

TEST_F(FaultFileSystemTest, ARenamedDurableFileComesBackUnderItsOldName) {
  Write("old", "data");
  ASSERT_TRUE(SyncDir().ok());
  ASSERT_TRUE(
      fs_->RenameFile(Path("old"), Path("new"), rocksdb::IOOptions(), nullptr)
          .ok());
  Drop();
  EXPECT_EQ(Read("old"), "data");
  EXPECT_EQ(Read("new"), "<absent>");
}

TEST_F(FaultFileSystemTest, ADeletedFileComesBackUntilTheDirectoryIsSynced) {
  Write("a", "synced", "-lost");
  Write("b", "b");
  ASSERT_TRUE(SyncDir().ok());
  ASSERT_TRUE(fs_->DeleteFile(Path("a"), rocksdb::IOOptions(), nullptr).ok());
  EXPECT_THAT(Children(), ElementsAre("b"));
  EXPECT_TRUE(
      fs_->FileExists(Path("a"), rocksdb::IOOptions(), nullptr).IsNotFound());
  EXPECT_EQ(Drop().names_restored, 1);
  EXPECT_EQ(Read("a"), "synced");  // What its last sync made durable.

  ASSERT_TRUE(fs_->DeleteFile(Path("a"), rocksdb::IOOptions(), nullptr).ok());
  ASSERT_TRUE(SyncDir().ok());
  EXPECT_EQ(Drop().names_restored, 0);
  EXPECT_EQ(Read("a"), "<absent>");
  EXPECT_THAT(Children(), ElementsAre("b"));
  // Nothing kept aside remains either.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(FaultFileSystemTest, APowerCutFailsEveryChangeAndOpen) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  ASSERT_TRUE(
      fs_->NewWritableFile(Path("a"), rocksdb::FileOptions(), &file, nullptr)
          .ok());
  fs_->CutPower();
  EXPECT_THAT(file->Append("x", rocksdb::IOOptions(), nullptr).ToString(),
              HasSubstr("power cut: write to"));
  EXPECT_TRUE(file->Sync(rocksdb::IOOptions(), nullptr).IsIOError());
  EXPECT_TRUE(file->Close(rocksdb::IOOptions(), nullptr).IsIOError());
  std::unique_ptr<rocksdb::FSWritableFile> other;
  EXPECT_TRUE(
      fs_->NewWritableFile(Path("b"), rocksdb::FileOptions(), &other, nullptr)
          .IsIOError());
  std::unique_ptr<rocksdb::FSSequentialFile> in;
  EXPECT_TRUE(
      fs_->NewSequentialFile(Path("a"), rocksdb::FileOptions(), &in, nullptr)
          .IsIOError());
  EXPECT_TRUE(SyncDir().IsIOError());
  Drop();
  EXPECT_EQ(Read("a"), "<absent>");
  EXPECT_EQ(Read("b"), "<absent>");
}

TEST_F(FaultFileSystemTest, CutPowerAtCutsAtThatOperation) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  ASSERT_TRUE(
      fs_->NewWritableFile(Path("a"), rocksdb::FileOptions(), &file, nullptr)
          .ok());
  const int64_t before = fs_->Operations();
  fs_->CutPowerAt(3);
  EXPECT_TRUE(file->Append("1", rocksdb::IOOptions(), nullptr).ok());
  EXPECT_TRUE(file->Sync(rocksdb::IOOptions(), nullptr).ok());
  EXPECT_FALSE(fs_->PowerIsCut());
  EXPECT_TRUE(file->Append("2", rocksdb::IOOptions(), nullptr).IsIOError());
  EXPECT_TRUE(fs_->PowerIsCut());
  EXPECT_EQ(fs_->Operations(), before + 3);
  file.reset();
  ASSERT_TRUE(SyncDir().IsIOError());
  Drop();
  EXPECT_EQ(Read("a"), "<absent>");  // Its name was never synced.
}

TEST_F(FaultFileSystemTest, FailsTheNthWriteOnce) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  ASSERT_TRUE(
      fs_->NewWritableFile(Path("a"), rocksdb::FileOptions(), &file, nullptr)
          .ok());
  fs_->InjectFault({.op = Fault::Op::kWrite,
                    .nth = 2,
                    .error = FaultFileSystem::Error::kNoSpace});
  EXPECT_TRUE(file->Sync(rocksdb::IOOptions(), nullptr).ok());  // Not a write.
  EXPECT_TRUE(file->Append("1", rocksdb::IOOptions(), nullptr).ok());
  EXPECT_EQ(fs_->FaultFired(), std::nullopt);
  rocksdb::IOStatus s = file->Append("2", rocksdb::IOOptions(), nullptr);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_THAT(fs_->FaultFired(), Optional(HasSubstr("write to")));
  EXPECT_TRUE(file->Append("3", rocksdb::IOOptions(), nullptr).ok());
  ASSERT_TRUE(file->Close(rocksdb::IOOptions(), nullptr).ok());
  EXPECT_EQ(Read("a"), "13");  // The failed write wrote nothing.
}

TEST_F(FaultFileSystemTest, AStickyFaultFailsEveryLaterChange) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  ASSERT_TRUE(
      fs_->NewWritableFile(Path("a"), rocksdb::FileOptions(), &file, nullptr)
          .ok());
  fs_->InjectFault({.op = Fault::Op::kSync, .nth = 1, .sticky = true});
  EXPECT_TRUE(file->Append("1", rocksdb::IOOptions(), nullptr).ok());
  rocksdb::IOStatus s = file->Sync(rocksdb::IOOptions(), nullptr);
  EXPECT_TRUE(s.IsIOError() && !s.IsNoSpace()) << s.ToString();
  EXPECT_THAT(fs_->FaultFired(), Optional(HasSubstr("sync of")));
  EXPECT_TRUE(file->Append("2", rocksdb::IOOptions(), nullptr).IsIOError());
  EXPECT_TRUE(SyncDir().IsIOError());
  EXPECT_TRUE(
      fs_->DeleteFile(Path("a"), rocksdb::IOOptions(), nullptr).IsIOError());
  fs_->ClearFault();
  EXPECT_TRUE(file->Append("3", rocksdb::IOOptions(), nullptr).ok());
  EXPECT_TRUE(file->Sync(rocksdb::IOOptions(), nullptr).ok());
  ASSERT_TRUE(file->Close(rocksdb::IOOptions(), nullptr).ok());
  ASSERT_TRUE(SyncDir().ok());
  fs_->CutPower();
  Drop();
  EXPECT_EQ(Read("a"), "13");
}

}  // namespace
}  // namespace jobset::store
