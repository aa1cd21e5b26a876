#include "cli/completion.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// The flags of `flags` as the shell sees them: --name and -x.
std::string FlagWords(const std::vector<FlagSpec>& flags) {
  std::vector<std::string> words;
  for (const FlagSpec& flag : flags) {
    words.push_back(absl::StrCat("--", flag.name));
    if (flag.short_name != '\0') {
      words.push_back(absl::StrCat("-", std::string(1, flag.short_name)));
    }
  }
  return absl::StrJoin(words, " ");
}

// The flags that take a value: the word after them is not a verb or type.
std::string ValuedFlagPattern(const std::vector<CommandSpec>& commands) {
  std::vector<std::string> words;
  auto add = [&](const std::vector<FlagSpec>& flags) {
    for (const FlagSpec& flag : flags) {
      if (!flag.has_value) continue;
      words.push_back(absl::StrCat("--", flag.name));
      if (flag.short_name != '\0') {
        words.push_back(absl::StrCat("-", std::string(1, flag.short_name)));
      }
    }
  };
  add(GlobalFlags());
  for (const CommandSpec& c : commands) add(c.flags);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return absl::StrJoin(words, "|");
}

}  // namespace

absl::StatusOr<std::string> CompletionScript(
    absl::string_view shell, const std::vector<CommandSpec>& commands,
    const std::vector<std::string>& types) {
  if (shell != "bash" && shell != "zsh") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsupported shell type ", Quote(shell), " (use bash or zsh)"));
  }
  std::vector<std::string> verbs;
  std::string verb_flags;
  for (const CommandSpec& c : commands) {
    verbs.push_back(c.verb);
    absl::StrAppend(&verb_flags, "        ", c.verb, ") flags=\"",
                    FlagWords(c.flags), "\" ;;\n");
  }
  std::string script;
  if (shell == "zsh") {
    absl::StrAppend(&script,
                    "#compdef jobsetctl\n"
                    "autoload -U +X bashcompinit && bashcompinit\n");
  }
  absl::StrAppend(
      &script, "# jobsetctl completion for ", shell,
      ": source <(jobsetctl completion ", shell, ")\n",
      "_jobsetctl_names() {\n"
      "    local type=\"$1\" ns_flag=\"$2\"\n"
      "    jobsetctl $ns_flag --request-timeout=5s get \"$type\" -o name "
      "2>/dev/null | "
      "sed 's|.*/||'\n"
      "}\n"
      "\n"
      "_jobsetctl() {\n"
      "    local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
      "    local prev=\"\"\n"
      "    (( COMP_CWORD > 0 )) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      "    local verb=\"\" type=\"\" ns_flag=\"\" i word skip=0\n"
      "    for (( i = 1; i < COMP_CWORD; i++ )); do\n"
      "        word=\"${COMP_WORDS[i]}\"\n"
      "        if (( skip )); then skip=0; continue; fi\n"
      "        case \"$word\" in\n"
      "            -n|--namespace) ns_flag=\"-n ${COMP_WORDS[i+1]}\"; "
      "skip=1; continue ;;\n"
      "            --namespace=*) ns_flag=\"$word\"; continue ;;\n"
      "            ",
      ValuedFlagPattern(commands),
      ") skip=1; continue ;;\n"
      "            -*) continue ;;\n"
      "        esac\n"
      "        if [[ -z \"$verb\" ]]; then verb=\"$word\"\n"
      "        elif [[ -z \"$type\" ]]; then type=\"$word\"\n"
      "        fi\n"
      "    done\n"
      "    case \"$prev\" in\n"
      "        -o|--output) COMPREPLY=( $(compgen -W \"json yaml name wide "
      "jsonpath=\" -- \"$cur\") ); return 0 ;;\n"
      "        -f|--filename|--config) COMPREPLY=( $(compgen -f -- \"$cur\") "
      "); return 0 ;;\n"
      "        --jobset) COMPREPLY=( $(compgen -W \"$(_jobsetctl_names "
      "jobsets \"$ns_flag\")\" -- \"$cur\") ); return 0 ;;\n"
      "        -n|--namespace|-l|--selector|--field-selector|--server|"
      "--context|--token|--timeout|--request-timeout) return 0 ;;\n"
      "    esac\n"
      "    local flags=\"\"\n"
      "    case \"$verb\" in\n",
      verb_flags,
      "    esac\n"
      "    if [[ \"$cur\" == -* ]]; then\n"
      "        COMPREPLY=( $(compgen -W \"$flags ",
      FlagWords(GlobalFlags()),
      "\" -- \"$cur\") )\n"
      "        return 0\n"
      "    fi\n"
      "    if [[ -z \"$verb\" ]]; then\n"
      "        COMPREPLY=( $(compgen -W \"",
      absl::StrJoin(verbs, " "),
      "\" -- \"$cur\") )\n"
      "        return 0\n"
      "    fi\n"
      "    case \"$verb\" in\n"
      "        get|describe|delete|suspend|resume|wait|label|taint)\n"
      "            if [[ -z \"$type\" ]]; then\n"
      "                COMPREPLY=( $(compgen -W \"",
      absl::StrJoin(types, " "),
      "\" -- \"$cur\") )\n"
      "            else\n"
      "                COMPREPLY=( $(compgen -W \"$(_jobsetctl_names \"$type\" "
      "\"$ns_flag\")\" -- \"$cur\") )\n"
      "            fi ;;\n"
      "        watch) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W "
      "\"jobsets $(_jobsetctl_names jobsets \"$ns_flag\")\" -- \"$cur\") ) "
      ";;\n"
      "        logs) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W "
      "\"$(_jobsetctl_names pods \"$ns_flag\")\" -- \"$cur\") ) ;;\n"
      "        cordon|uncordon|drain) [[ -z \"$type\" ]] && COMPREPLY=( "
      "$(compgen -W \"$(_jobsetctl_names nodes \"\")\" -- \"$cur\") ) ;;\n"
      "        completion) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W "
      "\"bash zsh\" -- \"$cur\") ) ;;\n"
      "        config) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W \"view "
      "use-context set-context get-contexts current-context\" -- \"$cur\") "
      ") ;;\n"
      "        auth) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W \"can-i "
      "whoami\" -- \"$cur\") ) ;;\n"
      "        token) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W "
      "\"rotate-join\" -- \"$cur\") ) ;;\n"
      "        admin) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W "
      "\"snapshot\" -- \"$cur\") ) ;;\n"
      "        create) [[ -z \"$type\" ]] && COMPREPLY=( $(compgen -W "
      "\"token\" -- \"$cur\") ) ;;\n"
      "    esac\n"
      "    return 0\n"
      "}\n"
      "complete -o default -F _jobsetctl jobsetctl\n");
  return script;
}

}  // namespace jobset::cli
