# The command line of the bash scripts (scripts/test, scripts/build-bytecode, scripts/setup-e2e,
# scripts/setup-e2e.d/*), sourced by them: --help prints the script's leading comment (what it
# does and takes); any other word outside the ones it takes is one line on stderr and exit 2.
#   cli_args "WORD1 WORD2" "$@"      (the words the script takes as its one argument; "" for none)

cli_help() {  # the comment block under the shebang, without its "# "
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

cli_args() {
  local takes="$1" name
  shift
  name="$(basename "$(dirname "$0")")/$(basename "$0")"
  case "${1:-}" in -h|--help) cli_help; exit 0 ;; esac
  if [ $# -gt 1 ] || { [ $# -eq 1 ] && [[ " $takes " != *" $1 "* ]]; }; then
    if [ -n "$takes" ]; then
      echo "$name: unexpected argument(s) '$*': it takes one of: $takes (or none); --help says more" >&2
    else
      echo "$name: unexpected argument(s) '$*': it takes none; --help says more" >&2
    fi
    exit 2
  fi
}
