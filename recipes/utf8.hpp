// Text fp8lab stores must be UTF-8: every run record keeps its source's text, path and sweep name
// (docs/results-schema.md, "Provenance"), and JSON holds UTF-8 only. A file with other bytes (a
// Latin-1 comment, a stray 0xff in a sweep `name:`) is refused when it is read, naming the file,
// the line and the byte offset, instead of failing after training when the record is written.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fp8lab::recipes {

// The offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF; a sequence cut short counts from its
// first byte), or nullopt when `text` is UTF-8.
std::optional<std::size_t> invalid_utf8_offset(std::string_view text);

// Throws RecipeError when `text` is not UTF-8: "<file>:<line>: <what>: not UTF-8 at byte offset
// <n> (column <c>) '0xNN'; accepted: UTF-8 text ...". `what` names the text ("file text",
// "file name", an environment variable).
void require_utf8(std::string_view text, const std::string& file, const std::string& what);

// `text` safe to print on a terminal: control characters (C0, DEL, and C1 such as U+009B, which
// some terminals take as an escape sequence's start), and bytes that are not UTF-8, written as
// \xNN (or \u00NN for C1), so that a sweep `name:` holding ESC [ 2 J cannot clear the screen or
// recolour what follows.
std::string printable(std::string_view text);

}  // namespace fp8lab::recipes
