#include "common/failpoint.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"

namespace jobset::failpoint {
namespace {

// Bounds on what the variable may say.
constexpr size_t kMaxSpecBytes = 64 << 10;
constexpr int64_t kMaxCount = 1'000'000'000;
constexpr absl::Duration kMaxSleep = absl::Hours(1);

enum class Action { kOff, kAbort, kSleep, kError };

// One term of a point's chain: [P%][N*]action.
struct Term {
  double percent = 100;
  int64_t count = -1;  // -1: no N*, the term never runs out.
  Action action = Action::kOff;
  absl::Duration sleep;
  absl::StatusCode code = absl::StatusCode::kOk;
};

// What a spec arms: each point's terms, by index in kPoints (empty: off).
using Config = std::vector<std::vector<Term>>;

// The armed config and each point's hits. Never destroyed: a point may be
// hit by a thread still running at exit.
struct Engine {
  absl::Mutex mu;
  Config config ABSL_GUARDED_BY(mu) = Config(kNumPoints);
  std::vector<int64_t> hits ABSL_GUARDED_BY(mu) =
      std::vector<int64_t>(kNumPoints);
  absl::BitGen random ABSL_GUARDED_BY(mu);
};

Engine& TheEngine() {
  static Engine* const engine = new Engine();
  return *engine;
}

std::string KnownPoints() {
  return absl::StrCat("the failpoints: ", absl::StrJoin(PointNames(), ", "));
}

absl::Status SpecError(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(kEnvironmentVariable, ": ", what,
                   " (grammar: docs/failpoints.md; ", KnownPoints(), ")"));
}

int FindPoint(absl::string_view name) {
  for (int i = 0; i < kNumPoints; ++i) {
    if (name == kPoints[i].name) return i;
  }
  return -1;
}

std::optional<absl::StatusCode> ParseCode(absl::string_view name) {
  for (int c = 1; c <= static_cast<int>(absl::StatusCode::kUnauthenticated);
       ++c) {
    const auto code = static_cast<absl::StatusCode>(c);
    const std::string text = absl::StatusCodeToString(code);  // "UNAVAILABLE"
    if (text.empty() || absl::StartsWith(text, "UNKNOWN_CODE")) continue;
    if (absl::EqualsIgnoreCase(text, name)) return code;
  }
  return std::nullopt;
}

// The argument of `action(ARG)` in `text`, or nullopt when `text` is not
// that action.
std::optional<absl::string_view> Argument(absl::string_view text,
                                          absl::string_view action) {
  if (!absl::ConsumePrefix(&text, action) || !absl::ConsumePrefix(&text, "(") ||
      !absl::ConsumeSuffix(&text, ")")) {
    return std::nullopt;
  }
  return absl::StripAsciiWhitespace(text);
}

absl::StatusOr<Term> ParseTerm(absl::string_view text, const Point& point) {
  const std::string where =
      absl::StrCat("failpoint ", point.name, ", term \"", text, "\"");
  Term term;
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  if (size_t percent = rest.find('%'); percent != absl::string_view::npos) {
    if (!absl::SimpleAtod(rest.substr(0, percent), &term.percent) ||
        !(term.percent >= 0 && term.percent <= 100)) {
      return SpecError(
          absl::StrCat(where, ": P% must be a number from 0 to 100"));
    }
    rest.remove_prefix(percent + 1);
  }
  if (size_t star = rest.find('*'); star != absl::string_view::npos) {
    if (!absl::SimpleAtoi(rest.substr(0, star), &term.count) ||
        term.count < 1 || term.count > kMaxCount) {
      return SpecError(absl::StrCat(where, ": N* must be a whole number from ",
                                    "1 to ", kMaxCount));
    }
    rest.remove_prefix(star + 1);
  }
  rest = absl::StripAsciiWhitespace(rest);
  if (rest == "off") {
    term.action = Action::kOff;
  } else if (rest == "abort" || rest == "crash") {
    term.action = Action::kAbort;
  } else if (std::optional<absl::string_view> arg = Argument(rest, "sleep")) {
    int64_t ms = 0;
    term.action = Action::kSleep;
    if (absl::SimpleAtoi(*arg, &ms)) {
      term.sleep = absl::Milliseconds(ms);
    } else if (!absl::ParseDuration(*arg, &term.sleep)) {
      return SpecError(absl::StrCat(
          where, ": sleep takes milliseconds or a duration (500, 2s)"));
    }
    if (term.sleep < absl::ZeroDuration() || term.sleep > kMaxSleep) {
      return SpecError(absl::StrCat(where, ": sleep must be 0 to 1h"));
    }
  } else if (std::optional<absl::string_view> arg = Argument(rest, "error")) {
    std::optional<absl::StatusCode> code = ParseCode(*arg);
    if (!code.has_value()) {
      return SpecError(absl::StrCat(
          where,
          ": error takes a status code other than ok (unavailable, "
          "internal, aborted, ...)"));
    }
    if (point.site != Site::kStatus) {
      return SpecError(absl::StrCat(
          where,
          ": this point's site returns no status; it can abort, sleep "
          "or be off"));
    }
    term.action = Action::kError;
    term.code = *code;
  } else {
    return SpecError(
        absl::StrCat(where,
                     ": the action must be off, abort, crash, sleep(MS) or "
                     "error(CODE)"));
  }
  return term;
}

absl::StatusOr<Config> Parse(absl::string_view spec) {
  if (spec.size() > kMaxSpecBytes) {
    return SpecError(absl::StrCat("the spec has ", spec.size(),
                                  " bytes, over the limit of ", kMaxSpecBytes));
  }
  Config config(kNumPoints);
  std::vector<bool> named(kNumPoints);
  for (absl::string_view entry : absl::StrSplit(spec, ';')) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) continue;
    const size_t equals = entry.find('=');
    if (equals == absl::string_view::npos) {
      return SpecError(
          absl::StrCat("entry \"", entry, "\" is not POINT=TERMS"));
    }
    const absl::string_view name =
        absl::StripAsciiWhitespace(entry.substr(0, equals));
    const int index = FindPoint(name);
    if (index < 0) {
      return SpecError(absl::StrCat("unknown failpoint \"", name, "\""));
    }
    if (named[index]) {
      return SpecError(absl::StrCat("failpoint ", name, " is named twice"));
    }
    named[index] = true;
    for (absl::string_view text :
         absl::StrSplit(entry.substr(equals + 1), "->")) {
      absl::StatusOr<Term> term = ParseTerm(text, kPoints[index]);
      if (!term.ok()) return term.status();
      config[index].push_back(*term);
    }
    // A lone `off` disarms: the point keeps its one-load fast path.
    if (config[index].size() == 1 && config[index][0].action == Action::kOff &&
        config[index][0].count < 0 && config[index][0].percent >= 100) {
      config[index].clear();
    }
  }
  return config;
}

void Arm(Config config) {
  Engine& engine = TheEngine();
  absl::MutexLock lock(&engine.mu);
  for (int i = 0; i < kNumPoints; ++i) {
    engine.hits[i] = 0;
    internal::states[i].store(
        config[i].empty() ? internal::kOff : internal::kArmed,
        std::memory_order_relaxed);
  }
  engine.config = std::move(config);
}

absl::Status ReadEnvironment() {
  const char* spec = std::getenv(kEnvironmentVariable);
  if (spec == nullptr) {
    Arm(Config(kNumPoints));
    return absl::OkStatus();
  }
  if (!kCompiledIn) {
    Arm(Config(kNumPoints));
    return absl::FailedPreconditionError(absl::StrCat(
        kEnvironmentVariable,
        " is set, but this build has no failpoints "
        "(bazel -c opt compiles them out): unset it, or run a test build"));
  }
  absl::StatusOr<Config> config = Parse(spec);
  if (!config.ok()) {
    Arm(Config(kNumPoints));
    return config.status();
  }
  Arm(*std::move(config));
  JOBSET_LOG(WARNING) << kEnvironmentVariable << " armed: " << spec;
  return absl::OkStatus();
}

std::once_flag init_once;
const absl::Status* init_status = nullptr;

const absl::Status& Init() {
  std::call_once(init_once,
                 [] { init_status = new absl::Status(ReadEnvironment()); });
  return *init_status;
}

}  // namespace

absl::Status InitFromEnvironment() { return Init(); }

absl::Status Validate(absl::string_view spec) { return Parse(spec).status(); }

absl::Status SetForTesting(absl::string_view spec) {
  Init().IgnoreError();  // The variable is read once, and not after this.
  if (!kCompiledIn) {
    return absl::FailedPreconditionError(
        "this build has no failpoints (bazel -c opt compiles them out)");
  }
  absl::StatusOr<Config> config = Parse(spec);
  if (!config.ok()) return config.status();
  Arm(*std::move(config));
  return absl::OkStatus();
}

int64_t HitsForTesting(absl::string_view name) {
  const int index = FindPoint(name);
  if (index < 0) return 0;
  Engine& engine = TheEngine();
  absl::MutexLock lock(&engine.mu);
  return engine.hits[index];
}

std::vector<std::string> PointNames() {
  std::vector<std::string> names;
  for (const Point& point : kPoints) names.emplace_back(point.name);
  return names;
}

namespace internal {

absl::Status Hit(int index) {
  if (const absl::Status& init = Init(); !init.ok()) {
    JOBSET_LOG(FATAL) << init.message();
  }
  Term chosen;
  int64_t hit = 0;
  {
    Engine& engine = TheEngine();
    absl::MutexLock lock(&engine.mu);
    std::vector<Term>& terms = engine.config[index];
    if (terms.empty()) return absl::OkStatus();
    hit = ++engine.hits[index];
    bool taken = false;
    // gofail's order: the first term whose chance comes up and whose count
    // is not spent.
    for (Term& term : terms) {
      if (term.percent < 100 &&
          !absl::Bernoulli(engine.random, term.percent / 100)) {
        continue;
      }
      if (term.count == 0) continue;
      if (term.count > 0) --term.count;
      chosen = term;
      taken = true;
      break;
    }
    if (!taken) return absl::OkStatus();
  }
  const absl::string_view name = kPoints[index].name;
  switch (chosen.action) {
    case Action::kOff:
      return absl::OkStatus();
    case Action::kAbort:
      // One line (a single write) before the process goes as kill -9 takes
      // it: no destructor runs, nothing is flushed, no core file.
      JOBSET_LOG(WARNING) << "failpoint " << name << ": abort at hit " << hit
                          << " (SIGKILL)";
      raise(SIGKILL);
      _exit(128 + SIGKILL);  // Not reached.
    case Action::kSleep:
      absl::SleepFor(chosen.sleep);
      return absl::OkStatus();
    case Action::kError:
      return absl::Status(
          chosen.code,
          absl::StrCat("failpoint ", name, " (hit ", hit, "): injected error"));
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace jobset::failpoint
