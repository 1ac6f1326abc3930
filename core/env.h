// MPSIM_* environment variables: one parser for flags and one way to report a bad value.
// Every variable is read once, at start-up, where nothing may throw: a malformed value keeps
// the documented default and says so on stderr ("mpsim warning: VAR='value' ignored: expected
// ..."), never silently (docs/reliability.md lists each variable and its fallback).
#pragma once

#include <optional>
#include <string_view>

namespace mpsim::detail {

// "1", "true", "yes", "on" -> true; "0", "false", "no", "off" -> false (any case); else nothing.
std::optional<bool> parse_flag(std::string_view text);

// The flag `var`: `fallback` when unset or empty; `fallback` and a warning when malformed.
bool env_flag(const char* var, bool fallback);

// Writes "mpsim warning: VAR='value' ignored: expected <expected>" to stderr.
void warn_bad_env(std::string_view var, std::string_view value, std::string_view expected);

}  // namespace mpsim::detail
