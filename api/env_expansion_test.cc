#include "api/env_expansion.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::testing::ElementsAre;

EnvLookup Vars(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](
             absl::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

struct Case {
  const char* name;
  std::string input;
  std::string want;
};

// The cases of kubelet's expansion (k8s.io/kubernetes/third_party/forked/
// golang/expansion), over the same kind of variables.
TEST(ExpandEnvReferencesTest, AsKubeletExpands) {
  const EnvLookup lookup = Vars({{"VAR_A", "A"},
                                 {"VAR_B", "B"},
                                 {"VAR_C", "C"},
                                 {"VAR_REF", "$(VAR_A)"},
                                 {"VAR_EMPTY", ""},
                                 {"BIG_MONEY", "$"},
                                 {"JOB_COMPLETION_INDEX", "3"}});
  const Case cases[] = {
      {"whole string", "$(VAR_A)", "A"},
      {"repeated", "$(VAR_A)-$(VAR_A)", "A-A"},
      {"beginning", "$(VAR_A)-1", "A-1"},
      {"middle", "___$(VAR_B)___", "___B___"},
      {"end", "___$(VAR_C)", "___C"},
      {"compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"},
      {"flag", "--node_rank=$(JOB_COMPLETION_INDEX)", "--node_rank=3"},
      {"escaped reference", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"},
      {"two escaped references", "$$(VAR_B)_$$(VAR_A)", "$(VAR_B)_$(VAR_A)"},
      {"lone escaped operator", "$$", "$"},
      {"escaped operators", "$$$$$$", "$$$"},
      {"escaped operators then a reference", "$$$$$$$(BIG_MONEY)", "$$$$"},
      {"odd escapes then reference", "$$$$$$$(VAR_A)", "$$$A"},
      {"a value is not expanded again", "$(VAR_REF)", "$(VAR_A)"},
      {"empty value", "x$(VAR_EMPTY)y", "xy"},
      {"undefined stays", "$(UNDEFINED)", "$(UNDEFINED)"},
      {"undefined among defined", "$(VAR_A)$(UNDEFINED)$(VAR_B)",
       "A$(UNDEFINED)B"},
      {"empty name stays", "$()", "$()"},
      {"incomplete reference", "$(VAR_A", "$(VAR_A"},
      {"lone opener", "$(", "$("},
      {"incomplete after a reference", "$(VAR_A)$(VAR_B", "A$(VAR_B"},
      {"trailing operator", "$(VAR_A)$", "A$"},
      {"lone operator", "$", "$"},
      {"operator and a letter", "$VAR_A", "$VAR_A"},
      {"shell braces", "${VAR_A}", "${VAR_A}"},
      {"shell substitution of an unknown", "$(hostname)", "$(hostname)"},
      {"name ends at the first closer", "$(VAR_$(VAR_A))", "$(VAR_$(VAR_A))"},
      {"nothing to expand", "plain text", "plain text"},
      {"empty", "", ""},
      // Go's string(byte): the byte after a `$` becomes its code point's
      // UTF-8 (kubelet does this to a non-ASCII byte; so do we).
      {"operator before a non-ASCII byte", "$\xc3\xa9", "$\xc3\x83\xa9"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ExpandEnvReferences(c.input, lookup), c.want) << c.name;
  }
}

TEST(ExpandCommandAndArgsTest, FromTheContainersEnvTheLastDefinitionWins) {
  Container c;
  c.add_command("torchrun");
  c.add_command("--node_rank=$(JOB_COMPLETION_INDEX)");
  c.add_args("--master_addr=$(JOBSET_COORDINATOR)");
  c.add_args("$$(NOT_EXPANDED)");
  c.add_args("$(MISSING)");
  auto add = [&c](const char* name, const char* value) {
    EnvVar* v = c.add_env();
    v->set_name(name);
    v->set_value(value);
  };
  add("JOB_COMPLETION_INDEX", "0");
  add("JOBSET_COORDINATOR", "train-leader-0-0.train");
  add("JOB_COMPLETION_INDEX", "2");
  ExpandCommandAndArgs(&c);
  EXPECT_THAT(c.command(), ElementsAre("torchrun", "--node_rank=2"));
  EXPECT_THAT(c.args(), ElementsAre("--master_addr=train-leader-0-0.train",
                                    "$(NOT_EXPANDED)", "$(MISSING)"));
}

}  // namespace
}  // namespace jobset::api
