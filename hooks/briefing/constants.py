"""Limits that more than one part of the hook shares.

The number of parts a Claude Code briefing may take, the cap of one hook output,
the size cap of every file read, and the bounds that keep every refusal short
whatever is declared. A limit that only one harness has lives in its module.
"""


# SubagentStart and SessionStart handlers registered in hooks/hooks.json, one
# per part. Each is a process on every spawn (bench/ measures the set), and 8
# is the fewest that carry a 64 KiB briefing whole once labels, the header and
# the framing of every fragment are paid for; 7 fell short by a few hundred bytes.






PARTS = 8


# Claude Code persists any single hook output over 10,000 characters and sends
# a 2 kB preview instead. We budget UTF-8 bytes, which are never fewer than
# characters, so non-ASCII text stays under the cap however it is counted.
CLAUDE_OUTPUT_LIMIT = 10000


PART_BUDGET = CLAUDE_OUTPUT_LIMIT


# A file larger than this is not read: SKILL.md, agent files, settings.
MAX_FILE_BYTES = 1024 * 1024


MIN_FRAGMENT = 512


# A refusal (deny reason, abort instruction, systemMessage, pre-flight line) names at most
# REFUSAL_NAMES skills, in declaration order, then how many more there are and that the doctor
# lists them all: 5,000 missing names made a 65,000-character deny reason, which Claude Code hands
# to the *parent* model as the tool result (claude-code.md §3.4), and an abort far over the cap of
# one hook output (§3.3). The longest name valid_skill_name admits, plugin:skill with 255
# characters on each side, is up to 2,041 UTF-8 bytes, more than a whole deny reason may take; so
# every variable piece of a refusal is clipped too: a name to SHOWN_NAME bytes, a skill's problem
# to SHOWN_PROBLEM, a path to SHOWN_PATH (keeping its end). In UTF-8 bytes, never fewer than
# characters however a harness counts them, the longest deny reason is then
#   17 + 64 + 31         "briefing: agent '<agent>' references unknown skill(s): "
#   + 8 x (64 + 67) + 14 eight names, each with its problem in parentheses, between ", "
#   + 64 + 64            ", … and <6 digits> more (`briefing-doctor --show <agent>` lists them all)"
#   + 49 + 112 + 1       ". Install the skill(s) or fix the declaration in <path>."
#   + 19 + 4 + 112 + 93  " or " the first rule that adds skills, "(<its first skill>, …) (or N other rule(s))"
#   + 64 + 112 + 60      ", remove skillOverrides "<first>": "off" in <file> (and N other override(s)),"
#   = 1,928, under DENY_LIMIT; the abort instruction is smaller than 10,000 by far
#   (tests/test_refusal_bounds.py builds these worst cases and measures them).
REFUSAL_NAMES = 8


SHOWN_NAME = 64


SHOWN_PROBLEM = 64


SHOWN_PATH = 112


DENY_LIMIT = 2000


# Where the guard is also the delivery (Gemini CLI), it passes the spawn's arguments on whole with
# the briefing in front of the prompt. A spawn tool takes flat arguments; arguments nested deeper
# than this are not passed on, and a declaring agent's spawn is refused, saying so (issue 36). The
# hook reads and writes JSON at any depth without recursion: this bounds what it echoes, nothing else.
SPAWN_INPUT_DEPTH = 64
